package remote

import (
	"bytes"
	"fmt"
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
	Step string
	OK   bool
	// Word is the detail's first field when the step's protocol gives it
	// a closed set of words (ParseSteps); "" otherwise.
	Word   Word
	Detail []string // tab-separated fields after the status (and the Word)
}

// Word is a word of the step protocol: the first detail field of a step
// whose protocol gives it a closed set of words (a file "absent" or
// "present", a restore "restored" or "kept"), typed as a section's State
// is, and parsed once, strictly, where the result line is read
// (ParseSteps). Each script's words are its own (remediate/apply).
type Word string

// Vocabulary is what a script's steps may say: per step name (without
// its "-N" suffix: "file" for file-0), the words its detail begins with.
// A step it does not name has a free detail (a value, a path, a message).
type Vocabulary map[string]Says

// Says are the words of one step's detail when it is ok and when it
// failed; nil: that detail is free.
type Says struct{ OK, Fail []Word }

// ParseSteps reads the result lines as ParseResults does, then for each
// step v names takes the detail's first field as its Word. A field that
// is not one of that step's words is an error naming the host and the
// step: a word this kaudit does not know is refused, never guessed at.
func ParseSteps(stdout []byte, marker, host string, v Vocabulary) (Results, error) {
	rs := ParseResults(stdout, marker)
	for i := range rs {
		if err := rs[i].word(host, v); err != nil {
			return rs, err
		}
	}
	return rs, nil
}

// word takes r's Word from its detail, when v gives r's step words.
func (r *Result) word(host string, v Vocabulary) error {
	words := v[stepName(r.Step)].Fail
	if r.OK {
		words = v[stepName(r.Step)].OK
	}
	if words == nil {
		return nil
	}
	got := ""
	if len(r.Detail) > 0 {
		got = r.Detail[0]
	}
	for _, w := range words {
		if got == string(w) {
			r.Word, r.Detail = w, r.Detail[1:]
			return nil
		}
	}
	return fmt.Errorf("%s: step %s said %q, a word this kaudit does not know (want %s): the script's output is refused and nothing is read from it; the script kaudit sent and kaudit disagree, report it with kaudit's version", host, r.Step, got, wordList(words))
}

// stepName is step without a "-N" suffix.
func stepName(step string) string {
	i := strings.LastIndexByte(step, '-')
	if i < 0 || i == len(step)-1 || strings.Trim(step[i+1:], "0123456789") != "" {
		return step
	}
	return step[:i]
}

func wordList(ws []Word) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
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
