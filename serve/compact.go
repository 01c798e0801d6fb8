package serve

import (
	"strings"

	"github.com/kaudit/kaudit/report"
)

// compact moves the findings of r's hosts into memory of their own: one
// array for the whole fleet's findings, one for their evidence lines,
// one for the score deductions, and their texts in one string, each
// distinct text once however many hosts repeat it. A scan builds them
// host by host among its garbage and beside the report it replaces,
// which is served until the swap; without this, once both are freed,
// what survives of them pins most of the pages they shared, and serve's
// memory stepped up after the second scan (issue 31: 239 → 268 MB at
// 10,000 hosts). After compact nothing of the scan's own allocations is
// reachable from r's findings (TestCompactReleasesTheScansFindings).
func compact(r *report.Report) {
	var t texts
	for _, h := range r.Hosts {
		t.add(findingTexts(h)...)
	}
	t.pack()
	n, ev, nd := 0, 0, 0
	for _, h := range r.Hosts {
		n, nd = n+len(h.Findings), nd+len(h.Deductions)
		for _, f := range h.Findings {
			ev += len(f.Evidence)
		}
	}
	all := sized(report.Host{}.Findings, n)
	lines := make([]string, 0, ev)
	deductions := make([]report.Deduction, 0, nd)
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Deductions != nil {
			from := len(deductions)
			for _, d := range h.Deductions {
				deductions = append(deductions, report.Deduction{Rule: t.get(d.Rule), Severity: t.get(d.Severity), Points: d.Points})
			}
			h.Deductions = deductions[from:len(deductions):len(deductions)]
		}
		start := len(all)
		for _, f := range h.Findings {
			f.Rule, f.Title, f.Reason = t.get(f.Rule), t.get(f.Title), t.get(f.Reason)
			f.Observed, f.Expected = t.get(f.Observed), t.get(f.Expected)
			if f.Evidence != nil {
				from := len(lines)
				for _, e := range f.Evidence {
					lines = append(lines, t.get(e))
				}
				f.Evidence = lines[from:len(lines):len(lines)]
			}
			all = append(all, f)
		}
		if h.Findings != nil {
			h.Findings = all[start:len(all):len(all)]
		}
	}
}

// sized is an empty slice of like's type with room for n.
func sized[S ~[]E, E any](like S, n int) S { return make(S, 0, n) }

// findingTexts are the texts of h's findings and deductions compact moves.
func findingTexts(h report.Host) []string {
	var out []string
	for _, d := range h.Deductions {
		out = append(out, d.Rule, d.Severity)
	}
	for _, f := range h.Findings {
		out = append(out, f.Rule, f.Title, f.Reason, f.Observed, f.Expected)
		out = append(out, f.Evidence...)
	}
	return out
}

// texts packs distinct strings into one: add each, pack, then get each
// one's copy in it.
type texts struct {
	at    map[string][2]int // text -> its start and end in all
	order []string          // the distinct texts, as added
	n     int
	all   string
}

func (t *texts) add(ss ...string) {
	if t.at == nil {
		t.at = map[string][2]int{}
	}
	for _, s := range ss {
		if _, ok := t.at[s]; !ok && s != "" {
			t.at[s] = [2]int{t.n, t.n + len(s)}
			t.order = append(t.order, s)
			t.n += len(s)
		}
	}
}

// pack makes the one string, of the texts' size exactly.
func (t *texts) pack() {
	var b strings.Builder
	b.Grow(t.n)
	for _, s := range t.order {
		b.WriteString(s)
	}
	t.all, t.order = b.String(), nil
}

// get is s's copy in the packed string ("" stays "").
func (t *texts) get(s string) string {
	at, ok := t.at[s]
	if !ok {
		return s
	}
	return t.all[at[0]:at[1]]
}
