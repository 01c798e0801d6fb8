package trust_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/audit/trust"
	"github.com/kaudit/kaudit/test/simhost"
)

// trustFleet starts simulated hosts and an inventory whose known_hosts
// knows "known", has another key for "changed", and nothing else; "behind"
// is reached through "bastion", "down" refuses connections.
func trustFleet(t *testing.T) (*simhost.Fleet, []inventory.Host, string) {
	t.Helper()
	names := []string{"known", "bastion", "behind", "changed", "fresh"}
	var hosts []*simhost.Host
	for _, n := range names {
		h := simhost.DemoFleet()[0]
		h.Name = n
		hosts = append(hosts, h)
	}
	f, err := simhost.Start(t.TempDir(), hosts, "down")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	kh := filepath.Join(t.TempDir(), "known_hosts")
	other := simhost.NewHostKey().PublicKey()
	content := knownhosts.Line([]string{knownhosts.Normalize(f.Servers[0].Addr)}, f.Servers[0].HostKey) + "\n" +
		knownhosts.Line([]string{knownhosts.Normalize(f.Servers[3].Addr)}, other) + "\n"
	if err := os.WriteFile(kh, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := append([]inventory.Host(nil), f.Hosts...)
	for i := range inv {
		inv[i].KnownHosts = []string{kh}
	}
	inv[2].ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d", inv[1].Port)
	return f, inv, kh
}

func statuses(entries []trust.Entry) string {
	var b []string
	for _, e := range entries {
		b = append(b, e.Host+"="+string(e.Status))
	}
	return strings.Join(b, " ")
}

func TestFetchAndRecord(t *testing.T) {
	f, inv, kh := trustFleet(t)
	before, _ := os.ReadFile(kh)
	runner := transport.NewSSH()
	entries := trust.Fetch(context.Background(), inv, runner, trust.Options{Timeout: 10 * time.Second})
	bastion := inv[2].ProxyJump
	want := bastion + "=new known=known bastion=new behind=new changed=CHANGED fresh=new down=unreachable"
	if got := statuses(entries); got != want {
		t.Fatalf("statuses\n got %s\nwant %s", got, want)
	}
	if f.Servers[1].Forwards != 1 || f.Servers[2].Sessions != 0 {
		t.Errorf("behind: bastion forwards %d, target sessions %d: want its key fetched through the bastion, no session", f.Servers[1].Forwards, f.Servers[2].Sessions)
	}
	for _, s := range f.Servers {
		if s.Sessions != 0 {
			t.Errorf("a session was opened on %s: fetching a key must stop at the handshake", s.Host.Name)
		}
	}
	if e := entries[0]; !e.Bastion || e.Fingerprint() == "" || !strings.HasPrefix(e.Fingerprint(), "SHA256:") {
		t.Errorf("bastion entry %+v", e)
	}
	if e := entries[4]; len(e.Where) != 1 || e.Where[0] != kh+":2" {
		t.Errorf("changed: Where = %v, want %s:2", e.Where, kh)
	}
	if after, _ := os.ReadFile(kh); string(after) != string(before) {
		t.Fatalf("Fetch wrote known_hosts")
	}
	if n := trust.Pending(entries); n != 4 {
		t.Errorf("Pending = %d, want 4 (bastion, bastion again as a host, behind, fresh)", n)
	}

	recorded := trust.Record(entries, runner.HostKeys)
	want = bastion + "=recorded known=known bastion=recorded behind=recorded changed=CHANGED fresh=recorded down=unreachable"
	if got := statuses(recorded); got != want {
		t.Fatalf("after Record\n got %s\nwant %s", got, want)
	}
	after, _ := os.ReadFile(kh)
	if !strings.HasPrefix(string(after), string(before)) {
		t.Fatalf("existing lines changed:\n%s", after)
	}
	if n := strings.Count(string(after), "\n") - strings.Count(string(before), "\n"); n != 3 {
		t.Errorf("%d lines appended, want 3 (bastion once, behind, fresh):\n%s", n, after)
	}

	// A second run trusts everything it recorded, and still refuses the changed key.
	again := trust.Fetch(context.Background(), inv, transport.NewSSH(), trust.Options{Timeout: 10 * time.Second})
	want = bastion + "=known known=known bastion=known behind=known changed=CHANGED fresh=known down=unreachable"
	if got := statuses(again); got != want {
		t.Fatalf("second run\n got %s\nwant %s", got, want)
	}
}

// A bastion whose key changed is not pinned: the host behind it is
// unreachable through it, naming the bastion and its host-key error (the
// rule for every host behind a failed bastion).
func TestFetchBehindChangedBastion(t *testing.T) {
	_, inv, kh := trustFleet(t)
	behind := inv[2]
	behind.ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d", inv[3].Port) // "changed" as the bastion
	entries := trust.Fetch(context.Background(), []inventory.Host{behind}, transport.NewSSH(), trust.Options{Timeout: 10 * time.Second})
	if entries[0].Status != trust.Changed || entries[1].Status != trust.Failed || entries[1].Err.Kind != facts.KindUnreachable ||
		!strings.Contains(entries[1].Err.Msg, "bastion") || !strings.Contains(entries[1].Err.Msg, "HOST KEY CHANGED") {
		t.Fatalf("got %s; %+v", statuses(entries), entries[1].Err)
	}
	_ = kh
}

// insecure hosts are fetched too (and judged): the handshake still stops at
// the key, no session is opened.
func TestFetchInsecureHost(t *testing.T) {
	f, inv, _ := trustFleet(t)
	h := inv[4]
	h.HostKeyPolicy = "insecure"
	entries := trust.Fetch(context.Background(), []inventory.Host{h}, transport.NewSSH(), trust.Options{Timeout: 10 * time.Second})
	if entries[0].Status != trust.New || f.Servers[4].Sessions != 0 {
		t.Fatalf("insecure host: %s, %d sessions", statuses(entries), f.Servers[4].Sessions)
	}
}

// A bastion named only in ssh_config (ProxyJump, no proxy_jump in the
// inventory) is fetched first too, so the host behind it is reachable on
// the same run and both keys are offered.
func TestFetchBastionFromSSHConfig(t *testing.T) {
	f, inv, _ := trustFleet(t)
	behind := inv[2]
	bastion := behind.ProxyJump
	behind.ProxyJump, behind.SSHConfig = "", true
	dir := t.TempDir()
	conf := filepath.Join(dir, "config")
	if err := os.WriteFile(conf, []byte("Host behind\n  ProxyJump "+bastion+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := sshconfig.Load(sshconfig.Options{File: conf, Home: dir, LocalUser: "me"})
	if err != nil {
		t.Fatal(err)
	}
	runner := transport.NewSSH()
	runner.Config = cfg
	entries := trust.Fetch(context.Background(), []inventory.Host{behind}, runner, trust.Options{Timeout: 10 * time.Second})
	if got, want := statuses(entries), bastion+"=new behind=new"; got != want {
		t.Fatalf("statuses\n got %s\nwant %s (%+v)", got, want, entries)
	}
	if !entries[0].Bastion || f.Servers[1].Forwards != 1 {
		t.Errorf("bastion entry %+v, bastion forwards %d: want the key of behind fetched through it", entries[0], f.Servers[1].Forwards)
	}
}
