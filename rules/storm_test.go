package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
)

// capture reads a recorded ss output from audit/parse/testdata/conns.
func capture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "audit", "parse", "testdata", "conns", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stormHost is compliantHost with the listeners and established counts
// parsed from the recorded captures, and Kafka listening on 9092 and 9093.
func stormHost(t *testing.T, listen, counted string) *facts.Facts {
	t.Helper()
	f := compliantHost()
	var err error
	if f.Listeners, err = parse.SSListeners(capture(t, listen)); err != nil {
		t.Fatal(err)
	}
	if f.Established, err = parse.EstablishedCounts(capture(t, counted)); err != nil {
		t.Fatal(err)
	}
	f.Kafka.Properties["listeners"] = "PLAINTEXT://:9092,SSL://:9093"
	return f
}

func TestReconnectStormRecorded(t *testing.T) {
	for _, c := range []struct {
		counted  string
		status   Status
		observed string
	}{
		{"counted-est-0-this-machine.txt", Pass, "0 clients on :9092 vs an effective backlog of 1,024"},
		{"counted-est-1-this-machine.txt", Pass, "1 clients on :9092 vs an effective backlog of 1,024"},
		// 2,000 IPv4 (dual stack, [::ffff:…]) + 500 IPv6 on :9092; 30 on :9093; :8080 is no Kafka port.
		{"counted-est-2535-this-machine.txt", Fail, "2,500 clients on :9092 vs an effective backlog of 1,024: a restart sends ~2.4× the SYNs the queue holds"},
	} {
		t.Run(c.counted, func(t *testing.T) {
			f := stormHost(t, "ss-ltn-est-2535-this-machine.txt", c.counted)
			fd := find(t, Evaluate(f, DefaultProfile()), RuleReconnectStorm)
			if fd.Status != c.status || fd.Observed != c.observed {
				t.Fatalf("%s %q (%s), want %s %q", fd.Status, fd.Observed, fd.Reason, c.status, c.observed)
			}
			ev := strings.Join(fd.Evidence, "\n")
			if !strings.Contains(ev, "clients on :9093 vs an effective backlog of 50") || strings.Contains(ev, ":8080") {
				t.Errorf("evidence %q: want :9093, not :8080", ev)
			}
		})
	}
}

func TestReconnectStorm(t *testing.T) {
	one := func(clients, backlog int) func(f *facts.Facts) {
		return func(f *facts.Facts) {
			f.Listeners = []facts.Listener{{Addr: "0.0.0.0", Port: 22, Backlog: 128}, {Addr: "*", Port: 9092, Backlog: backlog}}
			f.Established = []facts.LocalConns{{Addr: "10.0.0.5", Port: 9092, Count: clients}, {Addr: "10.0.0.5", Port: 22, Count: 3}}
			f.Kafka.Properties[PropBacklog] = fmt.Sprint(backlog)
		}
	}
	then := func(a, b func(*facts.Facts)) func(*facts.Facts) { return func(f *facts.Facts) { a(f); b(f) } }
	sys := func(k, v string) func(*facts.Facts) { return func(f *facts.Facts) { f.Sysctl[k] = v } }
	obs := func(want string) func(t *testing.T, fd Finding) {
		return func(t *testing.T, fd Finding) {
			if fd.Observed != want {
				t.Errorf("observed %q, want %q", fd.Observed, want)
			}
		}
	}
	runRuleCases(t, RuleReconnectStorm, []ruleCase{
		{name: "the issue's example", mutate: one(1840, 50), status: Fail, reason: "restart → leader election → reconnect storm",
			check: func(t *testing.T, fd Finding) {
				obs("1,840 clients on :9092 vs an effective backlog of 50: a restart sends ~37× the SYNs the queue holds")(t, fd)
				if fd.Fix == nil || fd.Fix.KafkaProperties[PropBacklog] != "4096" || !fd.Fix.Restart {
					t.Errorf("fix %+v", fd.Fix)
				}
			}},
		{name: "fits", mutate: one(1840, 4096), status: Pass, reason: "which fit in an effective backlog of 4,096"},
		{name: "exactly full", mutate: one(50, 50), status: Pass},
		{name: "small excess: warn", mutate: one(62, 50), status: Warn, sev: Medium, reason: "only by up to 25%", check: obs("62 clients on :9092 vs an effective backlog of 50: a restart sends ~1.2× the SYNs the queue holds")},
		{name: "beyond the margin", mutate: one(63, 50), status: Fail},
		{name: "margin from the profile", mutate: one(63, 50), profile: func(p *Profile) { p.StormMargin = 30 }, status: Warn},
		{name: "fix asks for more than the clients", mutate: one(9000, 4096), status: Fail, check: func(t *testing.T, fd Finding) {
			if fd.Fix.KafkaProperties[PropBacklog] != "11250" || fd.Fix.Sysctl[KeySomaxconn] != "11250" {
				t.Errorf("fix %+v: want 9000 × 1.25 for both", fd.Fix)
			}
		}},
		{name: "Kafka 2.8: upgrade", mutate: then(one(1840, 50), func(f *facts.Facts) { f.Kafka.Version = "2.8.1" }), status: Fail, check: func(t *testing.T, fd Finding) {
			if fd.Fix.KafkaProperties != nil || !strings.Contains(fd.Fix.Manual, "upgrade Kafka") {
				t.Errorf("fix %+v", fd.Fix)
			}
		}},
		{name: "cookies off: drops, bounded by tcp_max_syn_backlog", mutate: then(one(40, 50), then(sys(KeySyncookies, "0"), sys(KeySynBacklog, "40"))), status: Fail, reason: "are dropped (tcp_syncookies=0)",
			check: obs("40 clients on :9092 vs 30 SYN-queue slots for new peers (¾ of tcp_max_syn_backlog 40, cookies off): a restart sends ~1.3× the SYNs the queue holds")},
		{name: "cookies for every SYN", mutate: then(one(3, 4096), sys(KeySyncookies, "2")), status: Fail, reason: "tcp_syncookies=2: every SYN"},
		{name: "cookies unreadable: assumed on", mutate: then(one(10, 50), func(f *facts.Facts) { delete(f.Sysctl, KeySyncookies) }), status: Pass, reason: "assumed 1"},
		{name: "IPv4 and IPv6 sockets on one port", mutate: func(f *facts.Facts) {
			f.Listeners = []facts.Listener{{Addr: "0.0.0.0", Port: 9092, Backlog: 50}, {Addr: "[::]", Port: 9092, Backlog: 4096}}
			f.Established = []facts.LocalConns{{Addr: "10.0.0.5", Port: 9092, Count: 400}, {Addr: "[fd10::1]", Port: 9092, Count: 4000}}
		}, status: Fail, check: obs("400 clients on 0.0.0.0:9092 vs an effective backlog of 50: a restart sends ~8.0× the SYNs the queue holds")},
		{name: "two listeners by address, and a second Kafka port", mutate: func(f *facts.Facts) {
			f.Kafka.Properties["listeners"] = "INTERNAL://10.0.0.5:9092,EXTERNAL://192.0.2.5:9092,SSL://:9093"
			f.Listeners = []facts.Listener{{Addr: "10.0.0.5", Port: 9092, Backlog: 4096}, {Addr: "192.0.2.5", Port: 9092, Backlog: 100}, {Addr: "[::]", Port: 9093, Backlog: 4096}}
			f.Established = []facts.LocalConns{{Addr: "10.0.0.5", Port: 9092, Count: 3000}, {Addr: "192.0.2.5", Port: 9092, Count: 150}, {Addr: "[::ffff:10.0.0.5]", Port: 9093, Count: 20}}
		}, status: Fail, check: func(t *testing.T, fd Finding) {
			obs("150 clients on 192.0.2.5:9092 vs an effective backlog of 100: a restart sends ~1.5× the SYNs the queue holds")(t, fd)
			if ev := strings.Join(fd.Evidence, "\n"); !strings.Contains(ev, "3,000 clients on 10.0.0.5:9092") || !strings.Contains(ev, "20 clients on :9093") {
				t.Errorf("evidence %q", ev)
			}
		}},
		{name: "no Kafka listener", mutate: func(f *facts.Facts) { f.Listeners = []facts.Listener{{Addr: "0.0.0.0", Port: 22, Backlog: 128}} }, status: Skip, reason: "no Kafka listener found (ports 9092)"},
		{name: "counts not gathered", mutate: func(f *facts.Facts) {
			f.Established = nil
			f.Sections = secs(facts.SecEstablished, "missing", "ss not found")
		}, status: Unknown, reason: "established connections not gathered: ss not found"},
		{name: "listeners not gathered", mutate: func(f *facts.Facts) { f.Listeners = nil }, status: Unknown},
		{name: "client host", mutate: func(f *facts.Facts) { f.Role = facts.RoleClient }, status: Skip, reason: "client host"},
	})
}
