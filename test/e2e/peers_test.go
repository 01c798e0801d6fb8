//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestPeerConsistency (issue 30): three brokers of one inventory group,
// one with somaxconn 4096 where its peers have 8192 and an MTU of 9000
// where they have 1500 (per network namespace), every value passing its
// threshold: the odd one is named with its peers' value, the two alike
// never are. A group of two brokers gives no peer finding, a group of
// three with three different values no outlier.
func TestPeerConsistency(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	broker := func(name, somaxconn string, mtu int) testfleet.HostSpec {
		return testfleet.HostSpec{Name: name, MTU: mtu,
			Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", somaxconn),
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "4096"}}}
	}
	f := testfleet.Start(t, []testfleet.HostSpec{
		broker("pa", "8192", 0), broker("pb", "4096", 9000), broker("pc", "8192", 0),
		broker("two1", "8192", 0), broker("two2", "4096", 9000),
		broker("all1", "4096", 0), broker("all2", "8192", 0), broker("all3", "16384", 0),
	})
	inv := writeGroupedInventory(t, f, map[string][]string{"trio": {"pa", "pb", "pc"}, "pair": {"two1", "two2"}, "mixed": {"all1", "all2", "all3"}})
	r := scan(t, runOpts{}, inv, "--timeout", "30s", "--connect-timeout", "5s")

	for _, c := range []struct {
		host   string
		status rules.Status
		in     []string
	}{
		{"pa", rules.Pass, nil},
		{"pc", rules.Pass, nil},
		{"pb", rules.Fail, []string{"net.core.somaxconn 4096 on pb; 2 of 3 brokers of trio have 8192", "MTU of the listener NIC 9000 on pb; 2 of 3 brokers of trio have 1500"}},
		{"two1", rules.Skip, []string{"2 audited brokers"}},
		{"two2", rules.Skip, []string{"2 audited brokers"}},
		{"all1", rules.Warn, []string{"net.core.somaxconn: no majority among the 3 brokers of mixed (16384 on 1, 4096 on 1, 8192 on 1)"}},
		{"all2", rules.Warn, []string{"no majority"}},
		{"all3", rules.Warn, []string{"no majority"}},
	} {
		h := r.host(t, c.host)
		assertComplete(t, h)
		fd := finding(h, rules.RulePeerConsistency)
		if fd == nil || fd.Status != c.status {
			t.Errorf("%s: %+v, want %s", c.host, fd, c.status)
			continue
		}
		all := fd.Reason + "\n" + strings.Join(fd.Evidence, "\n")
		for _, s := range c.in {
			if !strings.Contains(all, s) {
				t.Errorf("%s: %q lacks %q", c.host, all, s)
			}
		}
		if c.status == rules.Pass && strings.Contains(all, " on "+c.host+";") {
			t.Errorf("%s, like its peers, is named: %q", c.host, all)
		}
		for _, rule := range []string{"somaxconn", "numa-zone-reclaim", "transparent-hugepages", "clocksource", "clock-offset"} {
			if fd := finding(h, rule); fd == nil || fd.Status == rules.Unknown || fd.Status == rules.Error {
				t.Errorf("%s %s: %+v, want a verdict on the real host", c.host, rule, fd)
			}
		}
	}
	if fd := finding(r.host(t, "pb"), rules.RulePeerConsistency); fd != nil && (fd.Fix == nil || fd.Fix.Sysctl["net.core.somaxconn"] != "8192" || !strings.HasPrefix(fd.Fix.Summary, "align with peers")) {
		t.Errorf("pb's fix %+v, want align with peers: net.core.somaxconn=8192", fd.Fix)
	}
	if pb := r.host(t, "pb"); pb.Facts == nil || len(pb.Facts.NICs) == 0 || pb.Facts.NICs[0].MTU != 9000 {
		t.Errorf("pb's NICs %+v, want eth0 with MTU 9000", pb.Facts)
	}
}

// writeGroupedInventory is writeInventory with the hosts in groups.
func writeGroupedInventory(t *testing.T, f *testfleet.Fleet, groups map[string][]string) string {
	t.Helper()
	p := writeInventory(t, f)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "hosts:\n") + "groups:\n"
	for _, g := range sortedKeys(groups) {
		s += fmt.Sprintf("  %s:\n    hosts:\n", g)
		for _, n := range groups[g] {
			h := f.Host(n)
			s += fmt.Sprintf("      %s: {address: %s, port: %d}\n", n, h.Addr, h.Port)
		}
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
