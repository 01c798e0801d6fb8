package audit_test

import (
	"context"
	"testing"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/test/simhost"
)

// TestKeepConnections: with transport.SSH.KeepConnections (kaudit serve)
// three scans make one connection per host and a session per scan; a
// runner's Close ends them, and the next scan connects again. Without it
// every scan connects.
func TestKeepConnections(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("keep-a", simhost.FaultNone), demoHost("keep-b", simhost.FaultNone)})
	scan := func(r *transport.SSH) {
		t.Helper()
		for _, res := range audit.Scan(context.Background(), f.Hosts, audit.Options{Runner: r, SysctlKeys: sysctlKeys}) {
			if res.Err != nil {
				t.Fatalf("%s: %v", res.Host.Name, res.Err)
			}
		}
	}
	counts := func() (accepted, sessions []int) {
		for _, s := range f.Servers {
			accepted, sessions = append(accepted, s.AcceptedCount()), append(sessions, s.SessionCount())
		}
		return
	}
	kept := transport.NewSSH()
	kept.KeepConnections = true
	for range 3 {
		scan(kept)
	}
	acc, sess := counts()
	perScan := sess[0] / 3
	for i := range acc {
		if acc[i] != 1 || sess[i] != 3*perScan || perScan == 0 {
			t.Errorf("host %d: %d connections, %d sessions after 3 scans; want 1 connection, a session per scan", i, acc[i], sess[i])
		}
	}
	if n := kept.KeptConnections(); n != 2 {
		t.Errorf("%d connections kept, want 2", n)
	}
	kept.Close()
	if n := kept.KeptConnections(); n != 0 {
		t.Errorf("%d connections kept after Close", n)
	}
	scan(kept)
	if acc, _ := counts(); acc[0] != 2 || acc[1] != 2 {
		t.Errorf("after Close: %v connections, want 2 per host", acc)
	}
	kept.Close()

	fresh := transport.NewSSH() // the default: a connection per scan
	scan(fresh)
	scan(fresh)
	if acc, _ := counts(); acc[0] != 4 || acc[1] != 4 {
		t.Errorf("without KeepConnections: %v connections, want 2 more per host", acc)
	}
	if n := fresh.KeptConnections(); n != 0 {
		t.Errorf("without KeepConnections %d kept", n)
	}
}

// TestKeepConnectionsThroughBastion: kept connections through a
// ProxyJump bastion: one TCP connection to the bastion, one forwarded
// channel per host, kept across 3 scans (a session per scan on each).
func TestKeepConnectionsThroughBastion(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultNone), demoHost("target", simhost.FaultNone)})
	hosts := behind(5, f.Hosts[0], f.Hosts[1])
	r := transport.NewSSH()
	r.KeepConnections = true
	defer r.Close()
	for range 3 {
		for _, res := range audit.Scan(context.Background(), hosts, audit.Options{Concurrency: 5, SysctlKeys: sysctlKeys, Runner: r}) {
			if res.Err != nil {
				t.Fatalf("%s: %v", res.Host.Name, res.Err)
			}
		}
	}
	b, tg := f.Servers[0], f.Servers[1]
	if b.AcceptedCount() != 1 || tg.AcceptedCount() != 5 || tg.SessionCount()%15 != 0 || tg.SessionCount() == 0 {
		t.Errorf("bastion %d connections, target %d connections and %d sessions; want 1, 5 (one per host, kept) and a session per host per scan",
			b.AcceptedCount(), tg.AcceptedCount(), tg.SessionCount())
	}
	if n := r.KeptConnections(); n != 5 {
		t.Errorf("%d kept, want 5", n)
	}
}

// TestMaxKept: with MaxKept, at most that many connections are kept; the
// other hosts connect anew each scan (kaudit serve at its open-file or
// memory bound).
func TestMaxKept(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("keep-a", simhost.FaultNone), demoHost("keep-b", simhost.FaultNone), demoHost("keep-c", simhost.FaultNone)})
	r := transport.NewSSH()
	r.KeepConnections, r.MaxKept = true, 2
	defer r.Close()
	for range 3 {
		for _, res := range audit.Scan(context.Background(), f.Hosts, audit.Options{Concurrency: 1, Runner: r, SysctlKeys: sysctlKeys}) {
			if res.Err != nil {
				t.Fatalf("%s: %v", res.Host.Name, res.Err)
			}
		}
	}
	if n := r.KeptConnections(); n != 2 {
		t.Errorf("%d connections kept, want MaxKept 2", n)
	}
	var acc []int
	for _, s := range f.Servers {
		acc = append(acc, s.AcceptedCount())
	}
	if acc[0] != 1 || acc[1] != 1 || acc[2] != 3 {
		t.Errorf("connections per host after 3 scans: %v, want [1 1 3] (two kept, the third anew each scan)", acc)
	}
}
