package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// peerBroker is a compliant broker of group g with somaxconn and MTU set.
func peerBroker(name, g, somaxconn string, mtu int) FleetHost {
	f := compliantHost()
	f.Sysctl[KeySomaxconn] = somaxconn
	f.NICs[0].MTU = mtu
	return FleetHost{Name: name, Facts: f, Groups: []string{g}}
}

func peerFindings(t *testing.T, hosts []FleetHost) map[string]Finding {
	t.Helper()
	out := map[string]Finding{}
	for i, fs := range EvaluateFleet(hosts) {
		out[hosts[i].Name] = find(t, fs, RulePeerConsistency)
	}
	return out
}

func TestPeerConsistency(t *testing.T) {
	type want struct {
		status   Status
		severity Severity
		reason   []string // substrings
		fix      map[string]string
	}
	rackHost := func(name, rack string, rx int) FleetHost {
		h := peerBroker(name, "k", "8192", 1500)
		h.Facts.Kafka.Properties["broker.rack"] = rack
		h.Facts.NICs[0].Ring.RX = rx
		return h
	}
	for _, c := range []struct {
		name  string
		hosts []FleetHost
		want  map[string]want
	}{
		{name: "the issue's fleet: one broker with another somaxconn and MTU",
			hosts: []FleetHost{peerBroker("broker-a", "k", "8192", 1500), peerBroker("broker-b", "k", "4096", 9000), peerBroker("broker-c", "k", "8192", 1500)},
			want: map[string]want{
				"broker-a": {status: Pass},
				"broker-b": {status: Fail, severity: High, reason: []string{"net.core.somaxconn 4096 on broker-b; 2 of 3 brokers of k have 8192", "MTU of the listener NIC 9000 on broker-b; 2 of 3 brokers of k have 1500"},
					fix: map[string]string{KeySomaxconn: "8192"}},
				"broker-c": {status: Pass},
			}},
		{name: "two brokers: no peer finding",
			hosts: []FleetHost{peerBroker("broker-a", "k", "8192", 1500), peerBroker("broker-b", "k", "4096", 9000)},
			want:  map[string]want{"broker-a": {status: Skip, reason: []string{"2 audited brokers"}}, "broker-b": {status: Skip}}},
		{name: "every broker different: no majority, no outlier",
			hosts: []FleetHost{peerBroker("broker-a", "k", "8192", 1500), peerBroker("broker-b", "k", "4096", 1500), peerBroker("broker-c", "k", "16384", 1500)},
			want: map[string]want{
				"broker-a": {status: Warn, reason: []string{"net.core.somaxconn: no majority among the 3 brokers of k (16384 on 1, 4096 on 1, 8192 on 1)"}},
				"broker-b": {status: Warn}, "broker-c": {status: Warn}}},
		{name: "a tie: no majority",
			hosts: []FleetHost{peerBroker("a", "k", "8192", 1500), peerBroker("b", "k", "4096", 1500), peerBroker("c", "k", "8192", 1500), peerBroker("d", "k", "4096", 1500)},
			want:  map[string]want{"a": {status: Warn, reason: []string{"no majority among the 4 brokers of k (4096 on 2, 8192 on 2)"}}, "b": {status: Warn}, "c": {status: Warn}, "d": {status: Warn}}},
		{name: "the peers' value fails a threshold: named on the right host as a warning, never planned",
			hosts: []FleetHost{peerBroker("a", "k", "128", 1500), peerBroker("b", "k", "4096", 1500), peerBroker("c", "k", "128", 1500)},
			want:  map[string]want{"a": {status: Pass}, "b": {status: Warn, reason: []string{"net.core.somaxconn 4096 on b; 2 of 3 brokers of k have 128 (which fails kaudit's own check: align the peers instead)"}}}},
		{name: "both values fail a threshold: the outlier is named, nothing planned",
			hosts: []FleetHost{peerBroker("a", "k", "128", 1500), peerBroker("b", "k", "1024", 1500), peerBroker("c", "k", "128", 1500)},
			want:  map[string]want{"b": {status: Fail, severity: Medium, reason: []string{"net.core.somaxconn 1024 on b; 2 of 3 brokers of k have 128"}, fix: map[string]string{}}}},
		{name: "an unreadable value is not counted",
			hosts: []FleetHost{peerBroker("a", "k", "8192", 1500), peerBroker("b", "k", "8192", 9000), peerBroker("c", "k", "8192", 0)},
			want:  map[string]want{"a": {status: Pass}, "b": {status: Pass}, "c": {status: Pass}}},
		{name: "two groups are compared apart",
			hosts: []FleetHost{peerBroker("a", "k1", "8192", 1500), peerBroker("b", "k1", "8192", 1500), peerBroker("c", "k1", "8192", 1500),
				peerBroker("d", "k2", "4096", 1500), peerBroker("e", "k2", "4096", 1500), peerBroker("f", "k2", "4096", 1500)},
			want: map[string]want{"a": {status: Pass}, "d": {status: Pass}}},
		{name: "within_rack: rings differ between racks, not within",
			hosts: []FleetHost{rackHost("a", "r1", 4096), rackHost("b", "r1", 4096), rackHost("c", "r1", 4096), rackHost("d", "r2", 2048), rackHost("e", "r2", 2048)},
			want:  map[string]want{"a": {status: Pass}, "d": {status: Pass}}},
		{name: "within_rack: one differs inside its rack",
			hosts: []FleetHost{rackHost("a", "r1", 4096), rackHost("b", "r1", 1024), rackHost("c", "r1", 4096)},
			want:  map[string]want{"a": {status: Pass}, "b": {status: Fail, severity: Medium, reason: []string{"rx ring of the listener NIC 1024 on b; 2 of 3 brokers of k have 4096"}}}},
		{name: "a client host is no peer",
			hosts: []FleetHost{peerBroker("a", "k", "8192", 1500), peerBroker("b", "k", "8192", 1500), {Name: "p", Facts: &facts.Facts{Role: facts.RoleClient}, Groups: []string{"k"}}},
			want:  map[string]want{"a": {status: Skip}, "p": {status: Skip, reason: []string{"not a broker"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := peerFindings(t, c.hosts)
			for host, w := range c.want {
				fd := got[host]
				if fd.Status != w.status || (w.severity != "" && fd.Severity != w.severity) {
					t.Errorf("%s: %s/%s, want %s/%s: %s", host, fd.Status, fd.Severity, w.status, w.severity, fd.Reason)
				}
				all := fd.Reason + " | " + strings.Join(fd.Evidence, " | ")
				for _, s := range w.reason {
					if !strings.Contains(all, s) {
						t.Errorf("%s: reason %q lacks %q", host, fd.Reason, s)
					}
				}
				if w.fix != nil {
					if fd.Fix == nil || len(fd.Fix.Sysctl) != len(w.fix) {
						t.Fatalf("%s: fix %+v, want sysctls %v", host, fd.Fix, w.fix)
					}
					for k, v := range w.fix {
						if fd.Fix.Sysctl[k] != v || !strings.HasPrefix(fd.Fix.Summary, "align with peers") {
							t.Errorf("%s: fix %+v, want %s=%s", host, fd.Fix, k, v)
						}
					}
				}
				if fd.Status != Fail && fd.Fix != nil {
					t.Errorf("%s: %s with a fix %+v", host, fd.Status, fd.Fix)
				}
			}
		})
	}
}

func TestPeerFactValidation(t *testing.T) {
	for _, c := range []struct {
		p   PeerFact
		err string
	}{
		{PeerFact{Fact: "kernel.release", Severity: Medium}, ""},
		{PeerFact{Fact: "sysctl:*", Severity: Low, Except: []string{"a.b"}}, ""},
		{PeerFact{Fact: "file:/sys/kernel/mm/transparent_hugepage/enabled", Severity: Low}, ""},
		{PeerFact{Fact: "property:num.io.threads", Severity: Low}, ""},
		{PeerFact{Fact: "kernel.relase", Severity: Medium}, "is not one of"},
		{PeerFact{Fact: "file:/etc/shadow", Severity: Medium}, "under /proc/ or /sys/"},
		{PeerFact{Fact: "file:/sys/../etc/shadow", Severity: Medium}, "under /proc/ or /sys/"},
		{PeerFact{Fact: "sysctl:Net;rm", Severity: Medium}, "not sysctl:KEY"},
		{PeerFact{Fact: "nic.mtu", Severity: "huge"}, "severity"},
		{PeerFact{Fact: "nic.mtu", Severity: Low, Except: []string{"x.y"}}, "sysctl:* only"},
	} {
		err := c.p.validate()
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.err)
		}
	}
}
