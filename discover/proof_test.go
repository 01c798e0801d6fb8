package discover

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// Prove: only both ids, present and equal, prove a host; an absent id
// proves nothing, another id contradicts, a node id the cluster gives
// twice names neither host.
func TestProve(t *testing.T) {
	one := &Cluster{ID: "Xy3", Brokers: []Broker{{NodeID: 1, Host: "a"}, {NodeID: 2, Host: "b"}}}
	noID := &Cluster{ID: "", Brokers: []Broker{{NodeID: 1, Host: "a"}}}
	twice := &Cluster{ID: "Xy3", Brokers: []Broker{{NodeID: 1, Host: "a"}, {NodeID: 1, Host: "b"}}}
	for _, tc := range []struct {
		name  string
		c     *Cluster
		f     *facts.Facts
		proof facts.Proof
		why   string
	}{
		{"both ids", one, brokerFacts(kraft("Xy3", 1), kraft("Xy3", 1)), facts.ProofProven, "meta.properties in /data/a, /data/b says cluster Xy3 node 1"},
		{"ZooKeeper broker.id", one, brokerFacts(&facts.MetaProperties{ClusterID: "Xy3", NodeID: -1, BrokerID: 1}), facts.ProofProven, ""},
		{"no meta.properties", one, brokerFacts(nil), facts.ProofUnproven, "no meta.properties could be read"},
		{"no cluster.id in the file", one, brokerFacts(kraft("", 1)), facts.ProofUnproven, "/data/a/meta.properties says cluster (none) node 1: an absent id proves nothing"},
		{"no node id in the file", one, brokerFacts(kraft("Xy3", -1)), facts.ProofUnproven, "says cluster Xy3 node (none): an absent id proves nothing"},
		{"cluster without id, file without id", noID, brokerFacts(kraft("", 1)), facts.ProofUnproven, "the cluster gave no cluster id"},
		{"another cluster", one, brokerFacts(kraft("Other", 1)), facts.ProofContradicted, "/data/a/meta.properties says cluster Other node 1"},
		{"another node", one, brokerFacts(kraft("Xy3", 1), kraft("Xy3", 2)), facts.ProofContradicted, "/data/b/meta.properties says cluster Xy3 node 2"},
		{"absent id beside another cluster", one, brokerFacts(kraft("", 1), kraft("Other", 1)), facts.ProofContradicted, "/data/b/meta.properties says cluster Other"},
		{"node id given twice", twice, brokerFacts(kraft("Xy3", 1)), facts.ProofUnproven, "the cluster lists node id 1 for 2 brokers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, why := Prove(tc.c, 1, tc.f)
			if p != tc.proof || !strings.Contains(why, tc.why) {
				t.Errorf("Prove = %s %q, want %s containing %q", p, why, tc.proof, tc.why)
			}
		})
	}
}

// Two brokers with one node id: a finding, and neither host proven,
// though each host's meta.properties names the id.
func TestMapSharedNodeID(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{{NodeID: 1, Host: "h1", Port: 9092}, {NodeID: 1, Host: "h2", Port: 9092}}}
	hosts := []Host{{Name: "h1", Facts: brokerFacts(kraft("Xy3", 1))}, {Name: "h2", Facts: brokerFacts(kraft("Xy3", 1))}}
	maps, probs := Map(c, hosts, nil)
	if len(maps) != 2 || maps[0].Host != "h1" || maps[1].Host != "h2" {
		t.Fatalf("mappings %+v", maps)
	}
	for _, m := range maps {
		if m.Proof != facts.ProofUnproven {
			t.Errorf("broker on %s: %s, want unproven", m.Host, m.Proof)
		}
	}
	if len(probs) != 1 || probs[0].Kind != NodeIDShared || probs[0].NodeID != 1 || !strings.Contains(probs[0].Message, "h1:9092, h2:9092") {
		t.Errorf("problems %+v, want one %s naming both addresses", probs, NodeIDShared)
	}
}

// Standing: a host the cluster named acts only when proven; an inventory
// host unless its meta.properties names another cluster that the person
// did not accept by name.
func TestStanding(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{{NodeID: 1, Host: "a"}}}
	for _, tc := range []struct {
		name     string
		named    bool
		f        *facts.Facts
		accepted bool
		refusal  string
	}{
		{"named, proven", true, brokerFacts(kraft("Xy3", 1)), false, ""},
		{"named, no meta.properties", true, brokerFacts(nil), false, "not proven a broker of cluster Xy3 (no meta.properties could be read"},
		{"named, contradicted", true, brokerFacts(kraft("Other", 1)), false, "not proven a broker of cluster Xy3 (/data/a/meta.properties says cluster Other node 1)"},
		{"named, accepting changes nothing", true, brokerFacts(kraft("Other", 1)), true, "not proven a broker of cluster Xy3"},
		{"inventory, unproven", false, brokerFacts(nil), false, ""},
		{"inventory, another cluster", false, brokerFacts(kraft("Other", 1)), false, "its meta.properties names cluster Other; --accept-cluster-mismatch HOST accepts it"},
		{"inventory, another cluster accepted", false, brokerFacts(kraft("Other", 1)), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Stand(c, 1, tc.named, tc.f)
			s.Accepted = tc.accepted
			if got := s.Refusal(); !strings.Contains(got, tc.refusal) || (tc.refusal == "") != s.Acts() {
				t.Errorf("Refusal = %q (acts %v), want %q", got, s.Acts(), tc.refusal)
			}
		})
	}
}
