package remote

import (
	"bytes"
	"strings"
)

// SayFunc defines the shell functions a result-line script prints with:
// say STEP ok|fail DETAIL, and fail STEP DETAIL (which ends the script).
// The script must set M to the marker first.
const SayFunc = `say() { printf '%s\t%s\t%s\t%s\n' "$M" "$1" "$2" "$3"; }
fail() { say "$1" fail "$2"; exit 0; }
`

// Result is one result line.
type Result struct {
	Step   string
	OK     bool
	Detail []string // tab-separated fields after the status
}

// Text is the result's detail fields joined by spaces ("" for nil).
func (r *Result) Text() string {
	if r == nil || len(r.Detail) == 0 {
		return ""
	}
	return strings.Join(r.Detail, " ")
}

// Results are a script run's result lines, in the order printed.
type Results []Result

// ParseResults reads the result lines of a script run with marker. Lines
// without the marker are ignored.
func ParseResults(stdout []byte, marker string) Results {
	var out Results
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		f := strings.Split(strings.TrimSuffix(string(line), "\r"), "\t")
		if len(f) < 3 || f[0] != marker {
			continue
		}
		out = append(out, Result{Step: f[1], OK: f[2] == "ok", Detail: f[3:]})
	}
	return out
}

// Find returns the result of step, nil when the script did not get there.
func (rs Results) Find(step string) *Result {
	for i := range rs {
		if rs[i].Step == step {
			return &rs[i]
		}
	}
	return nil
}

// FirstFailure returns the first failed step, nil when none failed.
func (rs Results) FirstFailure() *Result {
	for i := range rs {
		if !rs[i].OK {
			return &rs[i]
		}
	}
	return nil
}
