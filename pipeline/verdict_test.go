package pipeline

import (
	"testing"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

func TestJudge(t *testing.T) {
	withFindings := func(unreachable int, fs ...rules.Finding) *report.Report {
		r := &report.Report{Hosts: []report.Host{{Name: "a", Findings: fs}}}
		r.Summary.Unreachable, r.Summary.Hosts, r.Summary.Audited = unreachable, 1+unreachable, 1
		return r
	}
	highFail := rules.Finding{Status: rules.Fail, Severity: rules.High}
	lowFail := rules.Finding{Status: rules.Fail, Severity: rules.Low}
	critUnknown := rules.Finding{Status: rules.Unknown, Severity: rules.Critical}
	clusterProblem := func(sev string) *report.Report {
		r := withFindings(0, lowFail)
		r.Cluster = &report.Cluster{Problems: []report.ClusterProblem{{Rule: "broker-unaudited", Severity: sev, NodeID: 7}}}
		return r
	}
	interrupted := withFindings(1, highFail)
	interrupted.Interrupted = true
	cases := []struct {
		name          string
		r             *report.Report
		failOn        rules.Severity
		failOnUnknown bool
		want          Verdict
		msg           string
	}{
		{"clean", withFindings(0), rules.High, false, Pass, ""},
		{"high fails at high", withFindings(0, highFail), rules.High, false, Findings, ""},
		{"low fails below high", withFindings(0, lowFail), rules.High, false, Pass, ""},
		{"findings win over unaudited", withFindings(1, highFail), rules.High, false, Findings, ""},
		{"unaudited", withFindings(2, lowFail), rules.High, false, Unaudited, ""},
		{"unknown ignored", withFindings(0, critUnknown), rules.High, false, Pass, ""},
		{"unknown asked", withFindings(0, critUnknown), rules.High, true, Findings, "critical finding(s) could not be proven safe (--fail-on-unknown)"},
		{"a cluster problem fails at its severity", clusterProblem("high"), rules.High, false, Findings, ""},
		{"a cluster problem below the threshold", clusterProblem("medium"), rules.High, false, Pass, ""},
		{"interrupted", interrupted, rules.High, false, Interrupted, "interrupted: 1 of 2 hosts audited"},
	}
	for _, c := range cases {
		v, msg := judge(c.r, c.failOn, c.failOnUnknown)
		if v != c.want || msg != c.msg {
			t.Errorf("%s: %v %q, want %v %q", c.name, v, msg, c.want, c.msg)
		}
	}
}
