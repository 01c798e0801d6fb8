package rules

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
)

// pairFleet is the captured broker (ss -tin state established on
// 10.210.0.1: :9092 dual stack, :9093, and :8080, which is no Kafka port)
// and its producer host (the same connections from 10.210.0.2), from the
// named captures.
func pairFleet(t *testing.T, brokerFile, clientFile string) []FleetHost {
	t.Helper()
	b := compliantHost()
	b.Kafka.Properties["listeners"] = "PLAINTEXT://:9092,SSL://:9093"
	var err error
	if b.Conns, err = parse.SSTCPInfo(capture(t, brokerFile)); err != nil {
		t.Fatal(err)
	}
	b.ConnsTotal = len(b.Conns)
	c := &facts.Facts{Role: facts.RoleClient, Kernel: b.Kernel, Sysctl: b.Sysctl}
	if c.Conns, err = parse.SSTCPInfo(capture(t, clientFile)); err != nil {
		t.Fatal(err)
	}
	return []FleetHost{{Name: "broker-1", Address: "10.210.0.1", Facts: b}, {Name: "producer-1", Address: "10.210.0.2", Facts: c}}
}

const (
	brokerCap = "pair-broker-ss-tin-state-established-this-machine.txt"
	clientCap = "pair-client-ss-tin-state-established-this-machine.txt"
)

func fleetFinding(t *testing.T, hosts []FleetHost, host string) Finding {
	t.Helper()
	all := EvaluateFleet(hosts)
	for i, h := range hosts {
		if h.Name == host {
			return find(t, all[i], RuleClientWscaleMismatch)
		}
	}
	t.Fatalf("no host %s", host)
	return Finding{}
}

func TestClientWscaleMismatch(t *testing.T) {
	for _, c := range []struct {
		name           string
		hosts          func(t *testing.T) []FleetHost
		status         Status
		observed       string // prefix
		evidence, miss string // substring of the evidence, and one it must lack
	}{
		{name: "captured pair: 6 on Kafka ports match, :8080 ignored", hosts: func(t *testing.T) []FleetHost { return pairFleet(t, brokerCap, clientCap) },
			status: Pass, observed: "6 connections matched from 1 client hosts, 0 with mismatched scale", miss: "8080"},
		{name: "the talk's mismatch, 7 vs 1", hosts: func(t *testing.T) []FleetHost {
			return pairFleet(t, "pair-broker-mismatch-reconstructed.txt", clientCap)
		},
			status: Fail, observed: "6 connections matched from 1 client hosts, 1 with mismatched scale",
			evidence: "10.210.0.1:9092 ↔ 10.210.0.2:38370 (client producer-1): client snd_wscale 1, broker rcv_wscale 7"},
		{name: "source NAT before the broker: not matched, said so", hosts: func(t *testing.T) []FleetHost { return pairFleet(t, "pair-broker-snat-reconstructed.txt", clientCap) },
			status: Pass, observed: "5 connections matched from 1 client hosts, 0 with mismatched scale; 1 not matched",
			evidence: "producer-1 10.210.0.2:38400 → 10.210.0.1:9092: the broker has no connection with this 4-tuple: a NAT on the way"},
		{name: "broker's bounded sample", hosts: func(t *testing.T) []FleetHost {
			h := pairFleet(t, brokerCap, clientCap)
			var err error
			h[0].Facts.Conns, h[0].Facts.ConnsTotal, err = parse.ConnsSection(capture(t, "pair-broker-shrunk-lim4-this-machine.txt"))
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, status: Pass, observed: "3 connections matched from 1 client hosts, 0 with mismatched scale; 3 not matched", evidence: "beyond the 4 it listed of 7"},
		{name: "two client hosts with one 4-tuple (NATs): neither is matched", hosts: func(t *testing.T) []FleetHost {
			h := pairFleet(t, brokerCap, clientCap)
			twin := *h[1].Facts
			return append(h, FleetHost{Name: "producer-2", Address: "10.210.0.3", Facts: &twin})
		}, status: Unknown, observed: "0 connections matched from 0 client hosts", evidence: "the same 4-tuple is on client host producer-2 too"},
		{name: "no client host", hosts: func(t *testing.T) []FleetHost { return pairFleet(t, brokerCap, clientCap)[:1] },
			status: Unknown, observed: "", evidence: ""},
		{name: "nothing matches: unknown", hosts: func(t *testing.T) []FleetHost {
			h := pairFleet(t, brokerCap, clientCap)
			h[0].Facts.Conns, h[0].Facts.ConnsTotal = []facts.Conn{}, 0
			return h
		}, status: Unknown, observed: "0 connections matched from 0 client hosts", evidence: "the broker has no connection with this 4-tuple"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd := fleetFinding(t, c.hosts(t), "broker-1")
			ev := strings.Join(fd.Evidence, "\n")
			if fd.Status != c.status || !strings.HasPrefix(fd.Observed, c.observed) || !strings.Contains(ev, c.evidence) || (c.miss != "" && strings.Contains(ev, c.miss)) {
				t.Fatalf("%s %q\nreason %q\nevidence %q", fd.Status, fd.Observed, fd.Reason, ev)
			}
			if fd.Status == Fail && (fd.Severity != Critical || fd.Fix == nil) {
				t.Errorf("fail without critical severity or fix: %+v", fd)
			}
		})
	}
}

func TestClientWscaleMismatchClientSide(t *testing.T) {
	hosts := pairFleet(t, brokerCap, "pair-client-vip-reconstructed.txt")
	fd := fleetFinding(t, hosts, "producer-1")
	if fd.Status != Skip || !strings.Contains(fd.Reason, "6 connections") || !strings.Contains(fd.Reason, "5 matched") ||
		!strings.Contains(strings.Join(fd.Evidence, "\n"), "10.210.0.2:38386 → 192.0.2.10:9092: no audited broker has this address") {
		t.Fatalf("%s %q %q", fd.Status, fd.Reason, fd.Evidence)
	}
	if b := fleetFinding(t, hosts, "broker-1"); b.Status != Pass || !strings.HasPrefix(b.Observed, "5 connections matched") {
		t.Fatalf("broker %s %q", b.Status, b.Observed)
	}
	// The broker rules skip on the client host; tcp-timestamps is checked there.
	for _, fd := range Evaluate(hosts[1].Facts, DefaultProfile()) {
		r, _ := Lookup(fd.Rule)
		switch {
		case r.Scope == ScopeFleet:
		case r.Clients && fd.Status == Skip, !r.Clients && fd.Status != Skip:
			t.Errorf("client host: %s %s %q", fd.Rule, fd.Status, fd.Reason)
		}
	}
}

func TestApplyFleet(t *testing.T) {
	hosts := pairFleet(t, "pair-broker-mismatch-reconstructed.txt", clientCap)
	per := Evaluate(hosts[0].Facts, DefaultProfile())
	got := ApplyFleet(per, EvaluateFleet(hosts)[0])
	if len(got) != len(per) {
		t.Fatalf("%d findings, want %d", len(got), len(per))
	}
	for i := range got {
		if got[i].Rule != per[i].Rule {
			t.Fatalf("order changed at %d", i)
		}
		if got[i].Rule == RuleClientWscaleMismatch && got[i].Status != Fail {
			t.Errorf("merged %s", got[i].Status)
		}
	}
	if fd := find(t, per, RuleClientWscaleMismatch); fd.Status != Unknown {
		t.Errorf("ApplyFleet changed its input: %s", fd.Status)
	}
	if out := EvaluateFleet([]FleetHost{{Name: "down"}}); find(t, out[0], RuleClientWscaleMismatch).Status != Unknown {
		t.Errorf("host without facts: %+v", out[0])
	}
}

// BenchmarkEvaluateFleet: 100 brokers listing 4,096 connections each and
// 20 producer hosts with 1,000 connections each (half of them matched).
func BenchmarkEvaluateFleet(b *testing.B) {
	var hosts []FleetHost
	for i := range 100 {
		f := compliantHost()
		ip := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		for j := range 4096 {
			f.Conns = append(f.Conns, facts.Conn{Local: ip, LocalPort: 9092, Peer: fmt.Sprintf("10.2.%d.%d", j%20, 1), PeerPort: 20000 + j, SndWscale: 7, RcvWscale: 1})
		}
		f.ConnsTotal = len(f.Conns)
		hosts = append(hosts, FleetHost{Name: fmt.Sprintf("b%d", i), Facts: f})
	}
	for c := range 20 {
		f := &facts.Facts{Role: facts.RoleClient}
		for j := range 1000 {
			f.Conns = append(f.Conns, facts.Conn{Local: fmt.Sprintf("10.2.%d.1", c), LocalPort: 20000 + c + 20*j, Peer: fmt.Sprintf("10.1.0.%d", j%200+1), PeerPort: 9092, SndWscale: 1, RcvWscale: 7})
		}
		hosts = append(hosts, FleetHost{Name: fmt.Sprintf("p%d", c), Facts: f})
	}
	b.ResetTimer()
	for range b.N {
		EvaluateFleet(hosts)
	}
}

// TestFleetFactsSameFindings: the fleet rules find the same on
// FleetFacts as on the whole facts, for every shape of fleet above and a
// broker without Kafka, one whose ss section failed and a client host
// with no connections; and FleetFacts keeps no string of the original.
func TestFleetFactsSameFindings(t *testing.T) {
	noKafka := compliantHost()
	noKafka.Kafka = nil
	noKafka.Sections = map[string]facts.SectionStatus{facts.SecKafka: {State: "denied", Message: "ps: permission denied"}}
	noSS := compliantHost()
	noSS.Conns, noSS.Listeners = nil, nil
	noSS.Sections = map[string]facts.SectionStatus{facts.SecConns: {State: "missing", Message: "ss: command not found"}}
	fleets := map[string][]FleetHost{
		"pair":     pairFleet(t, brokerCap, clientCap),
		"mismatch": pairFleet(t, "pair-broker-mismatch-reconstructed.txt", clientCap),
		"snat":     pairFleet(t, "pair-broker-snat-reconstructed.txt", clientCap),
		"odd brokers": append(pairFleet(t, brokerCap, clientCap),
			FleetHost{Name: "nokafka", Address: "10.210.0.9", Facts: noKafka}, FleetHost{Name: "noss", Address: "10.210.0.8", Facts: noSS},
			FleetHost{Name: "idle-client", Facts: &facts.Facts{Role: facts.RoleClient}}, FleetHost{Name: "down"}),
	}
	shrunk := pairFleet(t, brokerCap, clientCap)
	var err error
	if shrunk[0].Facts.Conns, shrunk[0].Facts.ConnsTotal, err = parse.ConnsSection(capture(t, "pair-broker-shrunk-lim4-this-machine.txt")); err != nil {
		t.Fatal(err)
	}
	fleets["bounded sample"] = shrunk
	odd := peerBroker("broker-b", "k", "4096", 9000)
	odd.Facts.Kafka.Process.JavaVersion = "11.0.21"
	odd.Facts.Files = map[string]string{"/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never"}
	limit(16 << 30)(odd.Facts)           // a cgroup limit its peers lack
	devices("mq-deadline", 1)(odd.Facts) // an LV on md on spinning disks: scheduler, rotational, read-ahead
	fleets["peers"] = []FleetHost{peerBroker("broker-a", "k", "8192", 1500), odd, peerBroker("broker-c", "k", "8192", 1500)}
	for _, h := range fleets["peers"] {
		if h.Name != "broker-b" {
			h.Facts.Files = map[string]string{"/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never"}
		}
	}
	for name, hosts := range fleets {
		lean := make([]FleetHost, len(hosts))
		for i, h := range hosts {
			lean[i] = FleetHost{Name: h.Name, Address: h.Address, Facts: FleetFacts(h.Facts), Groups: h.Groups}
			if (h.Facts == nil) != (lean[i].Facts == nil) {
				t.Fatalf("%s: host %s: FleetFacts(nil) must be nil and only then", name, h.Name)
			}
		}
		want, got := EvaluateFleet(hosts), EvaluateFleet(lean)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fleet findings on FleetFacts differ:\n%+v\nwant\n%+v", name, got, want)
		}
		if name == "peers" && (want[1][1].Status != Fail || len(want[1][1].Evidence) != 8) {
			t.Errorf("%s: the comparison is vacuous: %+v", name, want[1][1])
		}
		if want[0][0].Status == Unknown && name == "pair" {
			t.Errorf("%s: the comparison is vacuous, the broker's finding is unknown", name)
		}
		for i, h := range hosts {
			if h.Facts != nil && len(h.Facts.Conns) > 0 && unsafe.StringData(h.Facts.Conns[0].Peer) == unsafe.StringData(lean[i].Facts.Conns[0].Peer) {
				t.Errorf("%s: host %s: FleetFacts shares its strings with the facts it was made from", name, h.Name)
			}
		}
	}
}
