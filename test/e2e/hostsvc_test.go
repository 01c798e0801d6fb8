//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestHostServices (issue 30): the timesync, conntrack-stat and rdns
// sections on real hosts. Three brokers of one group with a SASL
// listener: each host's /etc/hosts names only itself, so its own address
// resolves back and its peers' do not (no DNS server answers in the
// namespaces): reverse-dns fails naming the peers, never the host's own
// address. A SASL broker alone in its group resolves only itself: pass. A
// PLAINTEXT broker: skip, and the gather looks nothing up. A resolver
// slower than a second (a getent that sleeps first) fails with its time. One host runs
// a chronyc that says "Not synchronised": time-sync fails; the others have
// no time service kaudit can ask (no chronyc, ntpq, timesyncd state; no
// systemd for timedatectl): unknown, never pass. The conntrack counters
// are read per network namespace where the module is loaded.
func TestHostServices(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	sasl := map[string]string{"listeners": "CLIENT://:9092", "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT"}
	broker := func(name string, props map[string]string) testfleet.HostSpec {
		return testfleet.HostSpec{Name: name, Sysctls: base("net.ipv4.tcp_syncookies", "1"),
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props}}
	}
	unsynced := broker("ra", sasl)
	unsynced.Files = map[string]string{"/usr/local/bin/chronyc": "#!/bin/sh\nprintf 'Reference ID    : 00000000 ()\\nStratum         : 0\\nLeap status     : Not synchronised\\n'\n"}
	slow := broker("slow", sasl)
	slow.Files = map[string]string{"/usr/local/bin/getent": "#!/bin/sh\nsleep 1.3\nexec /usr/bin/getent \"$@\"\n"}
	f := testfleet.Start(t, []testfleet.HostSpec{unsynced, broker("rb", sasl), broker("rc", sasl), broker("solo", sasl), broker("plain", nil), slow})
	inv := writeGroupedInventory(t, f, map[string][]string{"sasl": {"ra", "rb", "rc"}, "one": {"solo"}, "plaintext": {"plain"}, "slowdns": {"slow"}})
	r := scan(t, runOpts{}, inv, "--timeout", "40s", "--connect-timeout", "5s")

	for _, name := range []string{"ra", "rb", "rc"} {
		h := r.host(t, name)
		assertComplete(t, h)
		fd := finding(h, rules.RuleReverseDNS)
		if fd != nil {
			t.Logf("%s reverse-dns %s: %s", name, fd.Status, fd.Observed)
		}
		if fd == nil || fd.Status != rules.Fail {
			t.Errorf("%s reverse-dns: %+v, want fail", name, fd)
			continue
		}
		for _, peer := range []string{"ra", "rb", "rc"} {
			addr := f.Host(peer).Addr
			named := strings.Contains(fd.Observed, "peer "+addr+":")
			if (peer != name) != named {
				t.Errorf("%s reverse-dns observed %q: peer %s (%s) named %v", name, fd.Observed, peer, addr, named)
			}
		}
		if strings.Contains(fd.Observed, f.Host(name).Addr+" →") || h.Facts.ReverseDNS.Lookups[0].Stat != facts.PTRFound || h.Facts.ReverseDNS.Lookups[0].Name != name {
			t.Errorf("%s: its own address, in its /etc/hosts, not resolved back: %+v", name, h.Facts.ReverseDNS)
		}
	}
	if fd := finding(r.host(t, "solo"), rules.RuleReverseDNS); fd == nil || fd.Status != rules.Pass {
		t.Errorf("solo reverse-dns: %+v, want pass", fd)
	}
	// A resolver that takes 1.3 s: the batch is slow, so each address is
	// looked up alone and named with its time.
	if fd := finding(r.host(t, "slow"), rules.RuleReverseDNS); fd == nil || fd.Status != rules.Fail || !strings.Contains(fd.Observed, f.Host("slow").Addr+" → slow took 1.") {
		t.Errorf("slow reverse-dns: %+v, want fail naming its own address as slow", fd)
	}
	plain := r.host(t, "plain")
	if fd := finding(plain, rules.RuleReverseDNS); fd == nil || fd.Status != rules.Skip || plain.Facts.ReverseDNS != nil {
		t.Errorf("plain reverse-dns: %+v, lookups %+v; want skip and none", fd, plain.Facts.ReverseDNS)
	}

	if fd := finding(r.host(t, "ra"), rules.RuleTimeSync); fd == nil || fd.Status != rules.Fail || !strings.Contains(fd.Observed, "Not synchronised") {
		t.Errorf("ra time-sync: %+v, want fail from chronyc", fd)
	}
	if fd := finding(r.host(t, "rb"), rules.RuleTimeSync); fd == nil || fd.Status == rules.Pass {
		t.Errorf("rb time-sync: %+v, want no pass without a time service", fd)
	}
	for _, name := range []string{"ra", "solo", "plain"} {
		h := r.host(t, name)
		fd := finding(h, rules.RuleConntrackDrops)
		switch {
		case fd == nil:
			t.Errorf("%s: no conntrack-drops finding", name)
		case h.Facts.ConntrackStat != nil && (fd.Status != rules.Pass || h.Facts.ConntrackStat.CPUs < 1):
			t.Errorf("%s conntrack-drops: %+v, stat %+v; want pass in a fresh namespace", name, fd, h.Facts.ConntrackStat)
		case h.Facts.ConntrackStat == nil && fd.Status != rules.Skip:
			t.Errorf("%s conntrack-drops: %+v, want skip without nf_conntrack", name, fd)
		}
	}
}
