package transport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"
)

// TestIdentity: names whose recorded key is the same sshd's share an
// identity; another key, no key or a certificate authority does not.
func TestIdentity(t *testing.T) {
	shared, other, ca := newSigner(t).PublicKey(), newSigner(t).PublicKey(), newSigner(t).PublicKey()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	lines := knownhosts.Line([]string{"a.example", "b.example"}, shared) + "\n" +
		knownhosts.Line([]string{"[c.example]:2222"}, shared) + "\n" +
		knownhosts.Line([]string{"d.example"}, other) + "\n" +
		"@cert-authority *.ca.example " + authorized(ca) + "\n"
	if err := os.WriteFile(kh, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	h, files := NewHostKeys(), KnownHostsFiles{User: []string{kh}}
	a, b, c := h.Identity("a.example", 22, files), h.Identity("b.example", 22, files), h.Identity("c.example", 2222, files)
	if a == "" || a != b || a != c {
		t.Errorf("one key behind a, b and c:2222: identities differ or are empty")
	}
	if d := h.Identity("d.example", 22, files); d == "" || d == a {
		t.Errorf("d has a key of its own: identity %q", d)
	}
	for _, name := range []string{"unknown.example", "x.ca.example"} {
		if id := h.Identity(name, 22, files); id != "" {
			t.Errorf("%s: identity %q, want none (no recorded key of its own)", name, id)
		}
	}
}

// TestSharedSlot (issue 31): at most SharedStartups handshakes to one
// sshd at once; the wait is bounded by the host's deadline, not by
// ConnectTimeout, and a slot given back is taken by the next.
func TestSharedSlot(t *testing.T) {
	key := newSigner(t).PublicKey()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(knownhosts.Line([]string{"a.example", "b.example", "c.example"}, key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := NewSSH()
	c.SharedStartups = 2
	ep := func(name string) endpoint {
		return endpoint{hkName: name, hkPort: 22, knownHosts: KnownHostsFiles{User: []string{kh}}}
	}
	ctx := context.Background()
	relA, err := c.sharedSlot(ctx, ep("a.example"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.sharedSlot(ctx, ep("b.example")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.sharedSlot(short, ep("c.example")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third handshake to the same sshd: %v, want to wait until its deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.sharedSlot(ctx, ep("c.example"))
		got <- err
	}()
	relA()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a slot given back was not taken")
	}
	if _, err := c.sharedSlot(short, endpoint{hkName: "unknown.example", hkPort: 22}); err != nil {
		t.Errorf("a host with no recorded key waited: %v", err)
	}
}
