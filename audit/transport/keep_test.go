package transport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// pipeClient is an SSH client connected over loopback TCP to an in-process
// server that accepts anyone and answers requests false (a keepalive
// still gets its reply).
func pipeClient(t *testing.T) *ssh.Client {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true}
	cfg.AddHostKey(signer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		ss, err := l.Accept()
		if err != nil {
			return
		}
		conn, chans, reqs, err := ssh.NewServerConn(ss, cfg)
		if err != nil {
			return
		}
		go ssh.DiscardRequests(reqs)
		for ch := range chans {
			ch.Reject(ssh.Prohibited, "no sessions here")
		}
		conn.Close()
	}()
	cs, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cc, chans, reqs, err := ssh.NewClientConn(cs, "pipe", &ssh.ClientConfig{User: "t", HostKeyCallback: ssh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	client := ssh.NewClient(cc, chans, reqs)
	t.Cleanup(func() { client.Close() })
	return client
}

// closed reports whether client's connection has ended.
func closed(client *ssh.Client) bool {
	done := make(chan struct{})
	go func() { client.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

// TestKeptPlaceHeldWhileLent: a kept host whose Run is under way keeps
// its place under MaxKept. Another host finishing meanwhile is not kept,
// and the first host's connection is kept again when its Run ends (before,
// the other host took the place and the first host's connection was
// closed: kaudit serve made new connections for kept hosts every scan).
func TestKeptPlaceHeldWhileLent(t *testing.T) {
	c := &SSH{MaxKept: 1}
	a, b := pipeClient(t), pipeClient(t)
	c.putKept("a", a)
	got := c.takeKept(context.Background(), "a", time.Second)
	if got != a {
		t.Fatalf("takeKept gave %v, want a's kept connection", got)
	}
	c.putKept("b", b) // b's Run ends while a's is under way
	if !closed(b) {
		t.Errorf("b was kept while a's place was lent (MaxKept 1)")
	}
	c.putKept("a", got)
	if n := c.KeptConnections(); n != 1 || c.kept["a"] != a {
		t.Errorf("after a's Run: %d kept, a kept %v; want a's connection kept", n, c.kept["a"] == a)
	}
	if len(c.lent) != 0 {
		t.Errorf("lent after the Run: %v", c.lent)
	}
}

// TestUnlendFreesThePlace: a Run that took a kept connection and kept
// none (its script failed) gives its place up to the next host.
func TestUnlendFreesThePlace(t *testing.T) {
	c := &SSH{MaxKept: 1}
	c.putKept("a", pipeClient(t))
	if c.takeKept(context.Background(), "a", time.Second) == nil {
		t.Fatal("a's kept connection not given")
	}
	c.unlend("a")
	b := pipeClient(t)
	c.putKept("b", b)
	if c.kept["b"] != b {
		t.Errorf("b not kept after a gave its place up: kept %v", c.kept)
	}
}
