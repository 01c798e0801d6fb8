package transport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/facts"
)

// closingServer accepts TCP connections on 127.0.0.1 and closes them
// before the SSH banner, as an sshd over MaxStartups (or killed) does: at
// once with hold 1, else once hold connections are open at the same time.
func closingServer(t *testing.T, hold int) (port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var open []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if open = append(open, c); len(open) >= hold {
				for _, c := range open {
					c.Close()
				}
				open = nil
			}
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func closingTarget(t *testing.T, port int) Target {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "id")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return Target{Name: "h", Address: "127.0.0.1", Port: port, User: "u", IdentityFiles: []string{key},
		KnownHosts: []string{filepath.Join(dir, "known_hosts")}, HostKeyPolicy: PolicyStrict,
		ConnectTimeout: 5 * time.Second, NoSSHConfig: true}
}

// TestMaxStartupsHintNeedsEvidence: a connection the host closes during
// the handshake names sshd's MaxStartups and --concurrency only when many
// handshakes to that address were in flight at once; one alone says what
// else closes a connection.
func TestMaxStartupsHintNeedsEvidence(t *testing.T) {
	ctx := context.Background()
	single := closingServer(t, 1)
	_, err := NewSSH().Run(ctx, closingTarget(t, single), []byte("true"))
	want := "connection closed by the host during the SSH handshake (sshd restarted or killed, or a firewall or TCP wrapper refused it? see the host's sshd log)"
	if e := AsError(err); e == nil || e.Kind != facts.KindProtocol || e.Msg != want {
		t.Errorf("one connection: %v, want %q", err, want)
	}

	const n = 6
	many := closingServer(t, n)
	c, tg := NewSSH(), closingTarget(t, many)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Run(ctx, tg, []byte("true"))
		}()
	}
	wg.Wait()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(many))
	hinted := 0
	for _, err := range errs {
		e := AsError(err)
		if e != nil && e.Kind == facts.KindProtocol && strings.Contains(e.Msg, "connections to "+addr+" being opened at once (sshd's MaxStartups drops new unauthenticated connections beyond 10 by default: lower --concurrency, or raise MaxStartups in the host's sshd_config)") {
			hinted++
		} else {
			t.Errorf("%d at once: %v", n, err)
		}
	}
	if hinted != n {
		t.Errorf("%d of %d hinted", hinted, n)
	}
}
