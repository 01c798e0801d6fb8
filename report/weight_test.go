package report

import (
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// The weights are part of the score's contract (README, HTML report).
func TestWeight(t *testing.T) {
	for sev, want := range map[rules.Severity]int{
		rules.Critical: 40, rules.High: 20, rules.Medium: 10, rules.Low: 4, rules.Info: 0, "bogus": 0,
	} {
		if got := Weight(sev); got != want {
			t.Errorf("Weight(%q) = %d, want %d", sev, got, want)
		}
	}
	h := Host{Findings: []rules.Finding{
		{Rule: "a", Severity: rules.Critical, Status: rules.Fail},
		{Rule: "b", Severity: rules.High, Status: rules.Fail},
		{Rule: "c", Severity: rules.Info, Status: rules.Fail},
		{Rule: "d", Severity: rules.High, Status: rules.Pass},
	}}
	ScoreHost(&h)
	if h.Score != 40 || len(h.Deductions) != 2 || h.Deductions[1].Points != 20 {
		t.Errorf("score %d, deductions %+v", h.Score, h.Deductions)
	}
}

func TestFinding(t *testing.T) {
	r := &Report{Hosts: []Host{
		{Name: "a", Findings: []rules.Finding{{Rule: "x", Status: rules.Pass}, {Rule: "y", Status: rules.Fail}}},
		{Name: "b", Findings: []rules.Finding{{Rule: "y", Status: rules.Warn}}},
		{Name: "down", Error: &HostError{Kind: facts.KindTimeout}},
	}}
	for _, c := range []struct {
		host, rule string
		want       rules.Status
		ok         bool
	}{{"a", "y", rules.Fail, true}, {"b", "y", rules.Warn, true}, {"b", "x", "", false}, {"down", "x", "", false}, {"nope", "y", "", false}} {
		f, ok := r.Finding(c.host, c.rule)
		if ok != c.ok || f.Status != c.want {
			t.Errorf("Finding(%s, %s) = %v, %v; want %v, %v", c.host, c.rule, f.Status, ok, c.want, c.ok)
		}
	}
}

// A re-rendered report keeps the threshold its scan recorded unless
// --fail-on is given; a missing or bogus record falls back to the flag.
func TestFailOnFor(t *testing.T) {
	for _, c := range []struct {
		recorded, flag string
		set            bool
		want           string
	}{
		{"critical", "high", false, "critical"},
		{"critical", "low", true, "low"},
		{"", "high", false, "high"},
		{"bogus", "high", false, "high"},
		{"bogus", "bogus2", true, "bogus2"},
	} {
		r := &Report{FailOn: c.recorded}
		if got := r.FailOnFor(c.flag, c.set); got != c.want {
			t.Errorf("recorded %q, flag %q (set %v): %q, want %q", c.recorded, c.flag, c.set, got, c.want)
		}
	}
}

// Summarize: hosts that fail alike share one deduction list (clipped,
// so an append copies); a host that fails otherwise has its own.
func TestSummarizeSharesAlikeDeductions(t *testing.T) {
	fail := func(rule string) rules.Finding {
		return rules.Finding{Rule: rule, Status: rules.Fail, Severity: rules.High}
	}
	r := &Report{Hosts: []Host{
		{Name: "a", Findings: []rules.Finding{fail("r1"), fail("r2")}},
		{Name: "b", Findings: []rules.Finding{fail("r1"), fail("r2")}},
		{Name: "c", Findings: []rules.Finding{fail("r1"), fail("r3")}},
	}}
	Summarize(r)
	a, b, c := r.Hosts[0].Deductions, r.Hosts[1].Deductions, r.Hosts[2].Deductions
	if len(a) != 2 || &a[0] != &b[0] || len(a) != cap(a) {
		t.Errorf("alike hosts' deductions not one clipped list: %v %v", a, b)
	}
	if &c[0] == &a[0] || c[1].Rule != "r3" || r.Hosts[2].Score != 60 {
		t.Errorf("host c: deductions %v, score %d", c, r.Hosts[2].Score)
	}
}
