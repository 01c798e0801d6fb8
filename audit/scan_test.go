package audit_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/test/simhost"
)

var sysctlKeys = []string{"net.core.somaxconn", "net.ipv4.tcp_syncookies", "net.ipv4.tcp_rmem"}

func startFleet(t testing.TB, hosts []*simhost.Host, unreachable ...string) *simhost.Fleet {
	t.Helper()
	f, err := simhost.Start(t.TempDir(), hosts, unreachable...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func demoHost(name string, fault simhost.Fault) *simhost.Host {
	h := simhost.DemoFleet()[0]
	h.Name, h.Fault = name, fault
	return h
}

func TestScanFaultMatrix(t *testing.T) {
	hosts := []*simhost.Host{
		demoHost("ok", simhost.FaultNone),
		demoHost("banner", simhost.FaultBanner),
		demoHost("hang", simhost.FaultHang),
		demoHost("nobanner", simhost.FaultNoBanner),
		demoHost("authrefused", simhost.FaultAuthRefused),
		demoHost("garbage", simhost.FaultGarbage),
		demoHost("truncated", simhost.FaultTruncated),
		demoHost("drop", simhost.FaultDrop),
		demoHost("sudo", simhost.FaultSudoPassword),
		demoHost("flood", simhost.FaultFlood),
	}
	f := startFleet(t, hosts, "down")
	// A host whose key is not the one in known_hosts.
	changed := demoHost("changedkey", simhost.FaultNone)
	s, err := simhost.Serve(changed, simhost.NewHostKey(), mustPub(t, f.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	// Record a different key for that address.
	appendKnown(t, f.KnownHosts, s.Addr, simhost.NewHostKey())
	ch := f.Hosts[0]
	ch.Name, ch.Port = "changedkey", s.Port()
	// And one that is not in known_hosts at all.
	unknown := demoHost("unknownkey", simhost.FaultNone)
	s2, err := simhost.Serve(unknown, simhost.NewHostKey(), mustPub(t, f.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	uk := f.Hosts[0]
	uk.Name, uk.Port = "unknownkey", s2.Port()

	inv := append(f.Hosts, ch, uk)
	for i := range inv {
		switch inv[i].Name {
		case "sudo":
			inv[i].Become = "sudo"
		case "flood":
			// 16 MiB must reach the output cap before any deadline, also
			// on a loaded machine: the host's own timeout wins.
			inv[i].Timeout = 30 * time.Second
		}
	}
	const timeout = 1500 * time.Millisecond
	res := audit.Scan(context.Background(), inv, audit.Options{Concurrency: 4, Timeout: timeout, ConnectTimeout: time.Second, SysctlKeys: sysctlKeys})

	want := map[string]facts.ErrorKind{
		"ok": "", "banner": "",
		"hang": facts.KindTimeout, "nobanner": facts.KindTimeout,
		"authrefused": facts.KindAuth, "garbage": facts.KindProtocol,
		"truncated": facts.KindProtocol, "drop": facts.KindProtocol,
		"sudo": facts.KindAuth, "down": facts.KindUnreachable, "flood": facts.KindProtocol,
		"changedkey": facts.KindHostKey, "unknownkey": facts.KindHostKey,
	}
	if len(res) != len(want) {
		t.Fatalf("got %d results, want %d", len(res), len(want))
	}
	for _, r := range res {
		kind := facts.ErrorKind("")
		if r.Err != nil {
			kind = r.Err.Kind
		}
		if kind != want[r.Host.Name] {
			t.Errorf("%s: kind %q (%v), want %q", r.Host.Name, kind, r.Err, want[r.Host.Name])
		}
		if r.Err == nil && (r.Facts == nil || r.Facts.Sysctl["net.core.somaxconn"] != "128") {
			t.Errorf("%s: facts not gathered: %+v", r.Host.Name, r.Facts)
		}
		if r.Err != nil && r.Facts != nil {
			t.Errorf("%s: has both an error and facts", r.Host.Name)
		}
		// The hung hosts are cut off by their deadline, not sooner (an upper
		// bound would time the machine: head-of-line blocking has its own
		// test, TestNoHeadOfLineBlocking, and benchmark).
		if (r.Host.Name == "hang" || r.Host.Name == "nobanner") && r.Duration < time.Second {
			t.Errorf("%s: took %v, want the deadline (%v / connect 1s)", r.Host.Name, r.Duration, timeout)
		}
	}
	msg := func(name string) string {
		for _, r := range res {
			if r.Host.Name == name && r.Err != nil {
				return r.Err.Msg
			}
		}
		return ""
	}
	if m := msg("changedkey"); !strings.Contains(m, "HOST KEY CHANGED") || !strings.Contains(m, "SHA256:") {
		t.Errorf("changed key message lacks warning or fingerprint: %s", m)
	}
	if m := msg("unknownkey"); !strings.Contains(m, "unknown host key") || !strings.Contains(m, "SHA256:") {
		t.Errorf("unknown key message: %s", m)
	}
	if m := msg("flood"); !strings.Contains(m, "more than 16 MiB") {
		t.Errorf("flood message: %s", m)
	}
	if m := msg("sudo"); !strings.Contains(m, "password") {
		t.Errorf("sudo message: %s", m)
	}
}

func TestScanAcceptNewRecordsKey(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("new", simhost.FaultNone)})
	if err := os.WriteFile(f.KnownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h := f.Hosts[0]
	h.HostKeyPolicy = "accept-new"
	res := audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{SysctlKeys: sysctlKeys})
	if res[0].Err != nil {
		t.Fatalf("accept-new: %v", res[0].Err)
	}
	data, _ := os.ReadFile(f.KnownHosts)
	if !strings.Contains(string(data), fmt.Sprintf("[127.0.0.1]:%d ssh-ed25519 ", h.Port)) {
		t.Fatalf("known_hosts not updated: %q", data)
	}
	// Strict now passes with the recorded key.
	h.HostKeyPolicy = "strict"
	res = audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{SysctlKeys: sysctlKeys})
	if res[0].Err != nil {
		t.Fatalf("strict after accept-new: %v", res[0].Err)
	}
}

func TestScanInterrupted(t *testing.T) {
	hosts := []*simhost.Host{demoHost("hang1", simhost.FaultHang), demoHost("hang2", simhost.FaultHang), demoHost("later", simhost.FaultNone)}
	f := startFleet(t, hosts)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res := audit.Scan(ctx, f.Hosts, audit.Options{Concurrency: 2, Timeout: time.Minute, SysctlKeys: sysctlKeys})
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Ctrl-C took %v to stop the scan", d)
	}
	for _, r := range res {
		if r.Err == nil || r.Err.Kind != facts.KindTimeout || !strings.Contains(r.Err.Msg, "interrupted") {
			t.Errorf("%s: %v, want interrupted", r.Host.Name, r.Err)
		}
	}
}

func TestScanManyHosts(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 50
	}
	var hosts []*simhost.Host
	for i := 0; i < n; i++ {
		hosts = append(hosts, demoHost(fmt.Sprintf("b%03d", i), simhost.FaultNone))
	}
	f := startFleet(t, hosts)
	res := audit.Scan(context.Background(), f.Hosts, audit.Options{Concurrency: 32, SysctlKeys: sysctlKeys})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host.Name, r.Err)
		}
		if r.Host.Name != fmt.Sprintf("b%03d", i) {
			t.Fatalf("result %d is %s: order not kept", i, r.Host.Name)
		}
		if r.Facts.Kafka == nil || r.Facts.Kafka.Version != "2.8.1" {
			t.Fatalf("%s: kafka facts %+v", r.Host.Name, r.Facts.Kafka)
		}
	}
	for _, s := range f.Servers {
		if s.Sessions != 1 {
			t.Fatalf("%s: %d sessions, want exactly one per host", s.Host.Name, s.Sessions)
		}
	}
}

func appendKnown(t testing.TB, path, addr string, key ssh.Signer) {
	t.Helper()
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, key.PublicKey())
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fmt.Fprintln(fh, line)
}

func mustPub(t testing.TB, keyFile string) ssh.PublicKey {
	t.Helper()
	data, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.ParsePrivateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.PublicKey()
}

func TestScanThroughProxyJump(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultNone), demoHost("behind", simhost.FaultNone)})
	bastion, behind := f.Hosts[0], f.Hosts[1]
	behind.ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d", bastion.Port)
	res := audit.Scan(context.Background(), []inventory.Host{behind}, audit.Options{SysctlKeys: sysctlKeys, Timeout: 10 * time.Second})
	if res[0].Err != nil {
		t.Fatalf("through the jump host: %v", res[0].Err)
	}
	if f.Servers[0].Forwards != 1 || f.Servers[0].Sessions != 0 || f.Servers[1].Sessions != 1 {
		t.Fatalf("bastion forwards=%d sessions=%d, target sessions=%d: the gather must run on the target, through the bastion",
			f.Servers[0].Forwards, f.Servers[0].Sessions, f.Servers[1].Sessions)
	}
	// A jump host that refuses us fails the target as unreachable, naming the
	// bastion and why (issue 11: every host behind a failed bastion).
	g := startFleet(t, []*simhost.Host{demoHost("bastion2", simhost.FaultAuthRefused), demoHost("behind2", simhost.FaultNone)})
	b2 := g.Hosts[1]
	b2.ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d", g.Hosts[0].Port)
	res = audit.Scan(context.Background(), []inventory.Host{b2}, audit.Options{SysctlKeys: sysctlKeys})
	if res[0].Err == nil || res[0].Err.Kind != facts.KindUnreachable || !strings.Contains(res[0].Err.Msg, "bastion kafka@127.0.0.1") || !strings.Contains(res[0].Err.Msg, "authentication refused") {
		t.Fatalf("refusing jump host: %+v", res[0].Err)
	}
}
