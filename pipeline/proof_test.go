package pipeline

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

// proofReport is a report of three audited hosts: h0 whose
// meta.properties proves it broker 0 of cluster C, h1 without a
// meta.properties, h2 whose meta.properties names cluster Other.
func proofReport() *report.Report {
	return &report.Report{Hosts: []report.Host{metaHost("h0", "C", 0), {Name: "h1", Facts: &facts.Facts{Kafka: &facts.Kafka{}}}, metaHost("h2", "Other", 2)}}
}

// The hosts kaudit may not act on: without an inventory every host the
// cluster names and its meta.properties does not prove; with one, the
// host whose meta.properties names another cluster, unless accepted.
func TestRefusals(t *testing.T) {
	cl := &discover.Cluster{ID: "C", Brokers: []discover.Broker{{NodeID: 0, Host: "h0"}, {NodeID: 1, Host: "h1"}, {NodeID: 2, Host: "h2"}}}
	named := &ClusterSource{found: cl, named: map[string]int32{"h0": 0, "h1": 1, "h2": 2}}
	inv := &ClusterSource{found: cl}
	for _, tc := range []struct {
		name   string
		src    *ClusterSource
		accept []string
		want   map[string]string
	}{
		{"named by the cluster", named, nil, map[string]string{
			"h1": "not proven a broker of cluster C (no meta.properties could be read",
			"h2": "not proven a broker of cluster C (/var/lib/kafka/meta.properties says cluster Other node 2)"}},
		{"inventory", inv, nil, map[string]string{"h2": "not proven a broker of cluster C (its meta.properties names cluster Other; --accept-cluster-mismatch HOST accepts it)"}},
		{"inventory, h2 accepted", inv, []string{"h2"}, map[string]string{}},
		{"no cluster", nil, nil, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.src.refusals(proofReport(), tc.accept)
			if len(got) != len(tc.want) {
				t.Fatalf("refusals %v, want %v", got, tc.want)
			}
			for h, w := range tc.want {
				if !strings.HasPrefix(got[h], w) {
					t.Errorf("%s: %q, want %q", h, got[h], w)
				}
			}
		})
	}
}

// A refused host has no plan, is given to no Apply, and the plan says
// why it is not changed.
func TestPlanFixRefused(t *testing.T) {
	r := proofReport()
	refused := Refusals{"h1": "not proven a broker of cluster C (why)"}
	fp := PlanFix(r, []inventory.Host{{Name: "h0"}, {Name: "h1"}, {Name: "h2"}}, remediate.Selector{}, refused)
	for _, h := range fp.Hosts {
		if h.Plan.Host == "h1" {
			t.Errorf("h1 is given to Apply")
		}
	}
	if len(fp.Plans) != 2 || len(fp.Refused) != 1 || fp.Refused[0] != (Refused{Host: "h1", Why: "not proven a broker of cluster C (why)"}) {
		t.Errorf("plans %d, refused %+v", len(fp.Plans), fp.Refused)
	}
	var b strings.Builder
	WriteFixPlan(&b, fp, 0)
	for _, want := range []string{"h1: not changed: not proven a broker of cluster C (why)\n", "1 host not proven a broker of the cluster: not changed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the plan has no %q:\n%s", want, b.String())
		}
	}
	if err := refusedVerdict(fp); err == nil || err.(*Failure).Verdict != NotApplied {
		t.Errorf("verdict %v, want NotApplied", err)
	}
}

// --accept-cluster-mismatch names a host of this run's inventory, and
// only with a cluster to mismatch.
func TestCheckAccepted(t *testing.T) {
	hosts := []inventory.Host{{Name: "h0"}}
	for _, tc := range []struct {
		name   string
		accept []string
		src    *ClusterSource
		err    string
	}{
		{"none", nil, nil, ""},
		{"an inventory host", []string{"h0"}, &ClusterSource{}, ""},
		{"no cluster", []string{"h0"}, nil, "--accept-cluster-mismatch needs --bootstrap"},
		{"no such host", []string{"h9"}, &ClusterSource{}, "--accept-cluster-mismatch h9: no such host in this run"},
		{"named by the cluster", []string{"h0"}, &ClusterSource{named: map[string]int32{"h0": 0}}, "--accept-cluster-mismatch h0: without an inventory every host is named by the cluster alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAccepted(tc.accept, hosts, tc.src)
			if (err == nil) != (tc.err == "") || (err != nil && !strings.HasPrefix(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The probe sends traffic only to a host the cluster named and its
// meta.properties proves; an inventory host is the person's word.
func TestMayProbe(t *testing.T) {
	cl := &discover.Cluster{ID: "C", Brokers: []discover.Broker{{NodeID: 0, Host: "h0"}, {NodeID: 1, Host: "h1"}}}
	if (&ClusterSource{}).mayProbe(cl) != nil || (*ClusterSource)(nil).mayProbe(cl) != nil {
		t.Errorf("an inventory fleet's probe is gated")
	}
	may := (&ClusterSource{named: map[string]int32{"h0": 0, "h1": 1}}).mayProbe(cl)
	r := proofReport()
	if why := may(inventory.Host{Name: "h0"}, r.Hosts[0].Facts); why != "" {
		t.Errorf("proven h0 not probed: %s", why)
	}
	if why := may(inventory.Host{Name: "h1"}, r.Hosts[1].Facts); !strings.HasPrefix(why, "not proven a broker of cluster C (no meta.properties") {
		t.Errorf("h1 without meta.properties: %q", why)
	}
}
