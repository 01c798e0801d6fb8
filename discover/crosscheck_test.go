package discover

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func brokerFacts(metas ...*facts.MetaProperties) *facts.Facts {
	k := &facts.Kafka{}
	for i, m := range metas {
		k.LogDirs = append(k.LogDirs, facts.LogDir{Path: "/data/" + string(rune('a'+i)), Meta: m})
	}
	return &facts.Facts{Kafka: k}
}

func kraft(cluster string, id int) *facts.MetaProperties {
	return &facts.MetaProperties{Version: "1", ClusterID: cluster, NodeID: id, BrokerID: -1}
}

func TestMap(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{
		{NodeID: 1, Host: "kafka-1.internal", Port: 9092},
		{NodeID: 2, Host: "10.0.0.2", Port: 9092},
		{NodeID: 3, Host: "kafka-3.internal", Port: 9092},
		{NodeID: 7, Host: "kafka-7.internal", Port: 9092},
		{NodeID: 8, Host: "lb.example.com", Port: 9094},
	}}
	hosts := []Host{
		{Name: "kafka-1.internal", Facts: brokerFacts(kraft("Xy3", 1), kraft("Xy3", 1))},
		{Name: "b2", Address: "10.0.0.2", Facts: brokerFacts(&facts.MetaProperties{ClusterID: "Xy3", NodeID: -1, BrokerID: 2})},
		{Name: "kafka-3.internal", Facts: brokerFacts(kraft("Other", 3))},
		{Name: "old-9", Facts: &facts.Facts{}},
		{Name: "by-meta", Facts: brokerFacts(kraft("Xy3", 8))},
		{Name: "unreadable", Facts: brokerFacts(nil)},
	}
	maps, probs := Map(c, hosts, nil)
	want := map[int32]struct {
		host, by string
		proof    facts.Proof
	}{
		1: {"kafka-1.internal", "name", facts.ProofProven},
		2: {"b2", "address", facts.ProofProven},
		3: {"kafka-3.internal", "name", facts.ProofContradicted},
		8: {"by-meta", "meta.properties", facts.ProofProven},
	}
	if len(maps) != len(want) {
		t.Fatalf("mappings %+v", maps)
	}
	for _, m := range maps {
		w := want[m.NodeID]
		if m.Host != w.host || m.By != w.by || m.Proof != w.proof {
			t.Errorf("broker %d: %+v, want %+v", m.NodeID, m, w)
		}
	}
	wantProbs := []struct {
		kind ProblemKind
		text string
	}{
		{MetaContradicts, "host kafka-3.internal was matched to broker 3 (kafka-3.internal:9092, by name) but /data/a/meta.properties says cluster Other node 3"},
		{BrokerUnaudited, "broker 7 (kafka-7.internal:9092) is in cluster Xy3 but in no inventory: nothing about it was checked"},
		{HostNotABroker, "host old-9 is in the broker group but runs no Kafka broker"},
		{HostNotABroker, "host unreadable is in the broker group but matches no advertised broker of cluster Xy3, and no meta.properties could be read"},
	}
	if len(probs) != len(wantProbs) {
		t.Fatalf("problems %+v", probs)
	}
	for i, w := range wantProbs {
		if probs[i].Kind != w.kind || !strings.HasPrefix(probs[i].Message, w.text) {
			t.Errorf("problem %d: %s %q, want %s %q", i, probs[i].Kind, probs[i].Message, w.kind, w.text)
		}
	}
}

func TestMapExplicitAndShared(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{{NodeID: 1, Host: "lb", Port: 9092}, {NodeID: 2, Host: "lb", Port: 9093}}}
	hosts := []Host{{Name: "h1", Facts: brokerFacts(nil)}, {Name: "h2", Facts: brokerFacts(kraft("Xy3", 1))}}
	maps, probs := Map(c, hosts, map[int32]string{1: "h1", 2: "h2"})
	if len(maps) != 2 || maps[0].Proof != facts.ProofUnproven || maps[1].Proof != facts.ProofContradicted {
		t.Errorf("mappings %+v", maps)
	}
	var kinds []ProblemKind
	for _, p := range probs {
		kinds = append(kinds, p.Kind)
	}
	if len(kinds) != 2 || kinds[0] != MetaContradicts || kinds[1] != AdvertisedShared {
		t.Errorf("problems %+v", probs)
	}
}

// A proven broker whose host listens on another port than the advertised
// one is reported (a NAT or port forward); a host whose listeners were not
// read, or that listens on the port, is not.
func TestMapPortUnbound(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{
		{NodeID: 1, Host: "k1", Port: 19092},
		{NodeID: 2, Host: "k2", Port: 9092},
		{NodeID: 3, Host: "k3", Port: 19092},
		{NodeID: 4, Host: "k4", Port: 19092},
	}}
	listening := func(id int, ports ...int) *facts.Facts {
		f := brokerFacts(kraft("Xy3", id))
		f.Listeners = []facts.Listener{}
		for _, p := range ports {
			f.Listeners = append(f.Listeners, facts.Listener{Addr: "0.0.0.0", Port: p})
		}
		return f
	}
	unread := listening(4)
	unread.Sections = map[string]facts.SectionStatus{facts.SecListeners: {State: facts.SectionError}}
	hosts := []Host{{Name: "k1", Facts: listening(1, 22, 9092, 9093)}, {Name: "k2", Facts: listening(2, 9092)},
		{Name: "k3", Facts: brokerFacts(kraft("Xy3", 3))}, {Name: "k4", Facts: unread}}
	_, probs := Map(c, hosts, nil)
	if len(probs) != 1 || probs[0].Kind != PortUnbound || probs[0].NodeID != 1 || probs[0].Host != "k1" {
		t.Fatalf("problems %+v, want one advertised-port-unbound for broker 1 on k1", probs)
	}
	want := "broker 1 advertises k1:19092, but no socket on host k1 listens on port 19092 (it listens on only 22, 9092, 9093): clients reach it through a NAT or a port forward, which kaudit does not audit"
	if probs[0].Message != want {
		t.Errorf("message %q\nwant    %q", probs[0].Message, want)
	}
}

// A host left out of this run (--limit) is still the inventory's: the
// broker it is is named, never called "in no inventory" nor proven, and
// the host is not judged a non-broker. A broker no inventory host is
// stays unaudited.
func TestMapLeftOut(t *testing.T) {
	c := &Cluster{ID: "Xy3", Brokers: []Broker{
		{NodeID: 1, Host: "kafka-1", Port: 9092},
		{NodeID: 2, Host: "kafka-2", Port: 9092},
		{NodeID: 3, Host: "10.0.0.3", Port: 9092},
		{NodeID: 9, Host: "kafka-9", Port: 9092},
	}}
	hosts := []Host{
		{Name: "kafka-1", Facts: brokerFacts(kraft("Xy3", 1))},
		{Name: "kafka-2", LeftOut: true},
		{Name: "b3", Address: "10.0.0.3", LeftOut: true},
		{Name: "spare", LeftOut: true},
	}
	maps, probs := Map(c, hosts, nil)
	got := map[int32]string{}
	for _, m := range maps {
		got[m.NodeID] = m.Host + " " + m.By + " " + string(m.Proof)
	}
	want := map[int32]string{1: "kafka-1 name proven", 2: "kafka-2 name left-out", 3: "b3 address left-out"}
	if len(got) != len(want) {
		t.Errorf("mappings %v, want %v", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("broker %d: %q, want %q", id, got[id], w)
		}
	}
	if len(probs) != 1 || probs[0].Kind != BrokerUnaudited || probs[0].NodeID != 9 {
		t.Errorf("problems %+v, want broker 9 unaudited alone", probs)
	}
}
