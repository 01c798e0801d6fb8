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
