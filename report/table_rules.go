package report

import (
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/rules"
)

// The rule sections of the terminal report. brief gives one line per
// rule; verbose gives each rule's full detail, host by host.

// ruleSection is one status's section.
type ruleSection struct {
	status rules.Status
	title  string
	note   string // said under the title, may be ""
}

var ruleSections = []ruleSection{
	{rules.Fail, "Failing rules", ""},
	{rules.Unknown, "Not proven safe (unknown)", "kaudit could not settle these rules from the facts it gathered: treat them as unsafe until checked."},
	{rules.Waived, "Waived (accepted by a waiver: not in the score or exit code)", ""},
	{rules.Error, "Rules not evaluated (error)", ""},
}

// brief writes each section as a table of one line per rule, then where
// the details are.
func (t *termReport) brief(r *Report) {
	for _, sec := range ruleSections {
		if groups := t.section(r, sec); len(groups) > 0 {
			t.b.WriteString(briefGrid(groups, sec.status, t.p).render(t.width, t.p))
		}
	}
	t.more()
}

// more says where the rest is.
func (t *termReport) more() {
	t.b.WriteString("\n")
	t.parts([]cell{
		{text: "More: -v for every host's observed value, the reason and the fix", paint: t.p.faint},
		{text: "kaudit explain RULE for the rationale and references", paint: t.p.faint},
		{text: "-f html, markdown or json for a file to share", paint: t.p.faint},
	}, 6)
}

// section writes a section's title and note and returns its groups; a
// section with none is left out, except the failing rules, which then
// say that none fails.
func (t *termReport) section(r *Report, sec ruleSection) []RuleGroup {
	groups := r.GroupByRule(sec.status)
	if len(groups) == 0 {
		if sec.status == rules.Fail {
			t.title(sec.title)
			t.b.WriteString(t.p.status(rules.Pass, "none: no rule fails on any audited host") + "\n")
		}
		return nil
	}
	t.title(sec.title + " (" + strconv.Itoa(len(groups)) + ")")
	if sec.note != "" {
		t.prose(sec.note, 0, nil)
	}
	return groups
}

// briefGrid is one line per rule: severity, rule, hosts affected, and the
// shortest observed → expected among the hosts (the reason when a rule
// has none, the waiver for a waived rule).
func briefGrid(groups []RuleGroup, st rules.Status, p palette) *grid {
	last := "OBSERVED → EXPECTED (shortest)"
	switch st {
	case rules.Waived:
		last = "WAIVER"
	case rules.Unknown, rules.Error:
		last = "WHY"
	}
	g := &grid{cols: []column{
		{head: "SEVERITY"},
		{head: "RULE"}, // whole: it is what kaudit explain takes
		{head: "HOSTS", right: true},
		{head: last, min: 12},
	}}
	for _, grp := range groups {
		sev := grp.Severity
		g.add(cell{text: string(sev), paint: func(s string) string { return p.severity(sev, s) }},
			plain(safe(grp.Rule)), plain(strconv.Itoa(len(grp.Hosts))), plain(briefText(grp)))
	}
	return g
}

// briefText is a group's shortest observed → expected among its hosts
// (-v shows each host's); the reason when there is none.
func briefText(g RuleGroup) string {
	if g.Status == rules.Waived {
		return safe(waiverNote(g.Sample))
	}
	best := ""
	for _, f := range g.Findings {
		s := safe(observedExpected(f))
		if g.Status == rules.Unknown || g.Status == rules.Error || s == "" {
			s = safe(f.Reason)
		}
		if s != "" && (best == "" || termui.StringWidth(s) < termui.StringWidth(best)) {
			best = s
		}
	}
	return best
}

// verboseIndent is where a detail's text starts, after its label.
const verboseIndent = 13

// verbose writes each section rule by rule: title, hosts, every host's
// observed → expected, the reason, the fix and the rationale.
func (t *termReport) verbose(r *Report) {
	for _, sec := range ruleSections {
		for _, g := range t.section(r, sec) {
			t.ruleDetail(g)
		}
	}
}

func (t *termReport) ruleDetail(g RuleGroup) {
	t.b.WriteString("\n")
	head := string(g.Severity) + " " + safe(g.Rule)
	if g.Title != "" {
		head += ": " + safe(g.Title)
	}
	lines := termui.Wrap(head, t.width, 4)
	lines[0] = t.p.severity(g.Severity, string(g.Severity)) + strings.TrimPrefix(lines[0], string(g.Severity))
	for _, l := range lines {
		t.b.WriteString(l + "\n")
	}
	t.detail("hosts", strconv.Itoa(len(g.Hosts))+": "+safe(hostList(g.Hosts, maxListedHosts)))
	if g.Status != rules.Waived {
		label := "observed" // on the first host's line only
		for i, f := range g.Findings {
			if s := observedExpected(f); s != "" {
				t.detail(label, safe(g.Hosts[i])+": "+safe(s))
				label = ""
			}
		}
	}
	reason, label := g.Sample.Reason, "reason"
	if g.Status == rules.Waived {
		reason, label = waiverNote(g.Sample), "waiver"
	}
	t.detail(label, safe(reason))
	if src := sourceText(g); src != "" {
		t.detail("source", safe(strings.TrimPrefix(src, "decided by: ")))
	}
	if f := g.Sample.Fix; f != nil && g.Status != rules.Waived {
		fix := f.Summary
		if f.Restart && !strings.Contains(strings.ToLower(fix), "restart") {
			fix += " (broker restart required)"
		}
		t.detail("fix", safe(fix))
	}
	if cr, ok := rules.Lookup(g.Rule); ok {
		t.detail("why", safe(cr.Rationale))
	}
}

// detail writes "  label      text", the text wrapped under itself.
func (t *termReport) detail(label, s string) {
	if s == "" {
		return
	}
	pad := verboseIndent - 2 - termui.StringWidth(label)
	lines := termui.Wrap(s, t.width-verboseIndent, 0)
	for i, l := range lines {
		if i == 0 {
			t.b.WriteString("  " + t.p.faint(label) + strings.Repeat(" ", max(1, pad)) + l + "\n")
			continue
		}
		t.b.WriteString(strings.Repeat(" ", verboseIndent) + l + "\n")
	}
}
