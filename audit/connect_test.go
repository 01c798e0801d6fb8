package audit_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/agent"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/test/simhost"
)

// behind returns n inventory hosts that all reach target through bastion.
func behind(n int, bastion, target inventory.Host) []inventory.Host {
	var out []inventory.Host
	for i := 0; i < n; i++ {
		h := target
		h.Name = fmt.Sprintf("b%03d", i)
		h.ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d", bastion.Port)
		out = append(out, h)
	}
	return out
}

// TestScanSharesOneBastionConnection: 60 hosts behind one bastion open one
// TCP connection to it, and the handshakes through it stay below sshd's
// MaxStartups, even at a concurrency of 32.
func TestScanSharesOneBastionConnection(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultNone), demoHost("target", simhost.FaultNone)})
	hosts := behind(60, f.Hosts[0], f.Hosts[1])
	ssh := transport.NewSSH()
	defer ssh.Close()
	res := audit.Scan(context.Background(), hosts, audit.Options{Concurrency: 32, SysctlKeys: sysctlKeys, Runner: ssh})
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host.Name, r.Err)
		}
	}
	b, tg := f.Servers[0], f.Servers[1]
	if b.Accepted != 1 || b.Forwards != 60 || b.Sessions != 0 {
		t.Errorf("bastion: %d TCP connections, %d forwards, %d sessions; want 1, 60, 0", b.Accepted, b.Forwards, b.Sessions)
	}
	// The server frees a handshake a moment after the client saw it end
	// (as sshd's MaxStartups slot): allow 2 of lag; unbounded would be ~32.
	if limit := transport.DefaultBastionStartups + 2; tg.Sessions != 60 || tg.MaxHandshakes > limit || tg.MaxHandshakes < 2 {
		t.Errorf("target: %d sessions, at most %d handshakes at once; want 60, 2..%d", tg.Sessions, tg.MaxHandshakes, limit)
	}
}

// TestScanBastionFailsOnce: a bastion that refuses us is tried once, warned
// about once, and every host behind it is unreachable naming it.
func TestScanBastionFailsOnce(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultAuthRefused), demoHost("target", simhost.FaultNone)})
	hosts := behind(12, f.Hosts[0], f.Hosts[1])
	var warns atomic.Int32
	ssh := transport.NewSSH()
	ssh.Warn = func(string) { warns.Add(1) }
	defer ssh.Close()
	res := audit.Scan(context.Background(), hosts, audit.Options{Concurrency: 6, SysctlKeys: sysctlKeys, Runner: ssh})
	for _, r := range res {
		if r.Err == nil || r.Err.Kind != facts.KindUnreachable || !strings.Contains(r.Err.Msg, "bastion kafka@127.0.0.1:") {
			t.Errorf("%s: %+v, want unreachable naming the bastion", r.Host.Name, r.Err)
		}
	}
	if f.Servers[0].Accepted != 1 || f.Servers[1].Accepted != 0 || warns.Load() != 1 {
		t.Errorf("bastion dialed %d times, target %d, %d warnings; want 1, 0, 1", f.Servers[0].Accepted, f.Servers[1].Accepted, warns.Load())
	}
}

// TestScanBastionDropsMidScan: when the bastion goes away, the hosts that
// finished keep their facts, the ones in flight fail naming the bastion.
func TestScanBastionDropsMidScan(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultNone), demoHost("ok", simhost.FaultNone), demoHost("hang", simhost.FaultHang)})
	hosts := append(behind(1, f.Hosts[0], f.Hosts[1]), behind(3, f.Hosts[0], f.Hosts[2])...)
	hosts[0].Name = "done-first"
	ssh := transport.NewSSH()
	defer ssh.Close()
	var once sync.Once
	go func() {
		time.Sleep(1500 * time.Millisecond) // the hung hosts are in their gather by now
		once.Do(f.Servers[0].Close)
	}()
	start := time.Now()
	res := audit.Scan(context.Background(), hosts[:1], audit.Options{SysctlKeys: sysctlKeys, Runner: ssh})
	res = append(res, audit.Scan(context.Background(), hosts[1:], audit.Options{Timeout: 20 * time.Second, SysctlKeys: sysctlKeys, Runner: ssh})...)
	if res[0].Err != nil {
		t.Fatalf("host done before the drop: %v", res[0].Err)
	}
	for _, r := range res[1:] {
		if r.Err == nil || r.Err.Kind != facts.KindUnreachable || !strings.Contains(r.Err.Msg, "connection to bastion") {
			t.Errorf("%s: %+v, want unreachable: connection to bastion lost", r.Host.Name, r.Err)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("in-flight hosts failed after %s: they must fail when the bastion drops, not at their deadline", d)
	}
}

// writeConfig writes an ssh_config file and loads it.
func writeConfig(t *testing.T, text string) *sshconfig.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := sshconfig.Load(sshconfig.Options{File: p})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestConnectTimeoutCoversAuth: a server that finishes the key exchange
// but never answers authentication fails at ConnectTimeout, not at the
// host's whole deadline.
func TestConnectTimeoutCoversAuth(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("slow", simhost.FaultSlowAuth)})
	h := f.Hosts[0]
	h.ConnectTimeout = 700 * time.Millisecond
	start := time.Now()
	res := audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{Timeout: 20 * time.Second, SysctlKeys: sysctlKeys})
	if e := res[0].Err; e == nil || e.Kind != facts.KindTimeout || !strings.Contains(e.Msg, "ConnectTimeout") {
		t.Fatalf("got %+v, want a ConnectTimeout timeout", e)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s with ConnectTimeout 700ms", d)
	}
}

// freezer forwards TCP to addr until frozen; then it stops moving bytes
// without closing anything (a peer that died, or a dropped route).
type freezer struct {
	ln     net.Listener
	frozen atomic.Bool
}

func newFreezer(t *testing.T, addr string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fz := &freezer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			go fz.pipe(c, up)
			go fz.pipe(up, c)
			t.Cleanup(func() { c.Close(); up.Close() })
		}
	}()
	return fz
}

func (fz *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for fz.frozen.Load() {
			time.Sleep(50 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.Close()
			}
			return
		}
	}
}

// TestServerAliveDetectsDeadPeer: with ServerAliveInterval from ssh_config
// a host that stops answering mid-gather fails within interval × CountMax.
func TestServerAliveDetectsDeadPeer(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("hang", simhost.FaultHang)})
	fz := newFreezer(t, f.Servers[0].Addr)
	h := f.Hosts[0]
	h.Name, h.SSHConfig = "frozen", true
	_, port, _ := net.SplitHostPort(fz.ln.Addr().String())
	h.Port = atoiT(t, port)
	ssh := transport.NewSSH()
	ssh.Config = writeConfig(t, "Host frozen\n  ServerAliveInterval 1\n  ServerAliveCountMax 2\n")
	h.HostKeyPolicy = "insecure" // the port differs from known_hosts; host keys are not what this tests
	h.Given = inventory.Given{Address: true, Port: true, User: true, IdentityFiles: true, KnownHosts: true, HostKeyPolicy: true}
	go func() { time.Sleep(1200 * time.Millisecond); fz.frozen.Store(true) }()
	start := time.Now()
	res := audit.Scan(context.Background(), []inventory.Host{h}, audit.Options{Timeout: 30 * time.Second, SysctlKeys: sysctlKeys, Runner: ssh})
	if e := res[0].Err; e == nil || e.Kind != facts.KindTimeout || !strings.Contains(e.Msg, "keepalives unanswered") {
		t.Fatalf("got %+v, want the keepalive timeout", e)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("dead peer noticed after %s; want about 1s + 3 × 1s", d)
	}
}

func atoiT(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIdentitiesOnlyWithFullAgent: an agent full of other keys makes the
// server give up (MaxAuthTries 6) before the configured key is offered,
// unless IdentitiesOnly offers just that key. (x/crypto's server forgives
// the first 6 key queries, sshd does not: 20 keys here, 10 in the e2e
// test against sshd.)
func TestIdentitiesOnlyWithFullAgent(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("h", simhost.FaultNone)})
	keyring := agent.NewKeyring()
	for i := 0; i < 20; i++ {
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(keyring, c); c.Close() }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", sock)
	base := f.Hosts[0]
	base.SSHConfig, base.UseAgent = true, true
	base.Given = inventory.Given{Address: true, Port: true, User: true, KnownHosts: true, HostKeyPolicy: true}
	for _, tc := range []struct {
		conf string
		ok   bool
	}{
		{"Host h\n  IdentityFile " + f.KeyFile + "\n", false},
		{"Host h\n  IdentityFile " + f.KeyFile + "\n  IdentitiesOnly yes\n", true},
	} {
		ssh := transport.NewSSH()
		ssh.Config = writeConfig(t, tc.conf)
		res := audit.Scan(context.Background(), []inventory.Host{base}, audit.Options{SysctlKeys: sysctlKeys, Runner: ssh})
		ssh.Close()
		if (res[0].Err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.conf, res[0].Err, tc.ok)
		}
	}
}

// TestFetchHostKeyThroughBastion: kaudit trust's primitive reads a target's
// key through its bastion without logging in to the target.
func TestFetchHostKeyThroughBastion(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("bastion", simhost.FaultNone), demoHost("target", simhost.FaultAuthRefused)})
	h := behind(1, f.Hosts[0], f.Hosts[1])[0]
	ssh := transport.NewSSH()
	defer ssh.Close()
	key, err := ssh.FetchHostKey(context.Background(), audit.Target(h, 0))
	if err != nil {
		t.Fatal(err)
	}
	n, p := ssh.KnownHostsName(audit.Target(h, 0))
	name := net.JoinHostPort(n, strconv.Itoa(p))
	if string(key.Marshal()) != string(f.Servers[1].HostKey.Marshal()) || name != f.Servers[1].Addr || f.Servers[0].Forwards != 1 {
		t.Errorf("key %s name %q forwards %d", key.Type(), name, f.Servers[0].Forwards)
	}
}

// TestScanTwoHopInventory: an inventory proxy_jump list is a chain; each
// hop is reached through the one before it and shared by the targets.
func TestScanTwoHopInventory(t *testing.T) {
	f := startFleet(t, []*simhost.Host{demoHost("j1", simhost.FaultNone), demoHost("j2", simhost.FaultNone), demoHost("target", simhost.FaultNone)})
	hosts := behind(5, f.Hosts[0], f.Hosts[2])
	for i := range hosts {
		hosts[i].ProxyJump = fmt.Sprintf("kafka@127.0.0.1:%d,kafka@127.0.0.1:%d", f.Hosts[0].Port, f.Hosts[1].Port)
	}
	ssh := transport.NewSSH()
	defer ssh.Close()
	for _, r := range audit.Scan(context.Background(), hosts, audit.Options{SysctlKeys: sysctlKeys, Runner: ssh}) {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host.Name, r.Err)
		}
	}
	j1, j2, tg := f.Servers[0], f.Servers[1], f.Servers[2]
	if j1.Accepted != 1 || j1.Forwards != 1 || j2.Accepted != 1 || j2.Forwards != 5 || tg.Sessions != 5 {
		t.Errorf("j1 %d conns %d forwards, j2 %d conns %d forwards, target %d sessions; want 1 1, 1 5, 5", j1.Accepted, j1.Forwards, j2.Accepted, j2.Forwards, tg.Sessions)
	}
}
