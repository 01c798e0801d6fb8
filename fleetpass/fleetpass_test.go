package fleetpass

import (
	"slices"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Run puts the fleet rules' findings into each audited host's and leaves
// a host that was not audited as it is.
func TestRunAuditedHostsOnly(t *testing.T) {
	placeholder := func() []rules.Finding {
		return []rules.Finding{{Rule: rules.RuleClientWscaleMismatch, Status: rules.Error, Reason: "placeholder"}}
	}
	r := &report.Report{Hosts: []report.Host{
		{Name: "b1", Facts: &facts.Facts{}, Findings: placeholder()},
		{Name: "down", Error: &report.HostError{Kind: facts.KindUnreachable}, Findings: placeholder()},
	}}
	Run(r)
	if f := r.Hosts[0].Findings[0]; f.Reason == "placeholder" {
		t.Errorf("audited host: the fleet rule's finding not merged: %+v", f)
	}
	if f := r.Hosts[1].Findings[0]; f.Reason != "placeholder" {
		t.Errorf("unaudited host: finding changed: %+v", f)
	}
}

// Members: the proven hosts, and a blocker for each broker no audited
// host is, under the cluster's restart group.
func TestMembers(t *testing.T) {
	if p, u := Members(nil); len(p) != 0 || len(u) != 0 {
		t.Errorf("no cluster: %v %v", p, u)
	}
	rc := &report.Cluster{ID: "abc", Brokers: []report.ClusterBroker{
		{NodeID: 1, Advertised: "k1:9092", Host: "b1", Proof: facts.ProofProven},
		{NodeID: 2, Advertised: "k2:9092"},
		{NodeID: 3, Advertised: "k3:9092", Host: "b3", Proof: facts.ProofLeftOut},
	}}
	proven, unaudited := Members(rc)
	if proven["b1"] != "abc" || proven["b3"] != "" {
		t.Errorf("proven = %v", proven)
	}
	want := []string{"broker 2 (k2:9092): in no inventory, not audited", "broker 3 (k3:9092): host b3, left out of this run (--limit), not audited"}
	if got := unaudited[report.ClusterPrefix+"abc"]; !slices.Equal(got, want) {
		t.Errorf("unaudited = %q, want %q", got, want)
	}
}
