package transport

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/sshconfig"
)

// TestOrderSigners pins OpenSSH's order (sshconnect2.c pubkey_prepare):
// configured keys the agent holds, the agent's others unless
// IdentitiesOnly, then configured key files; a certificate right before
// its key; an encrypted file whose key the agent holds is used through it.
func TestOrderSigners(t *testing.T) {
	a1, a2, shared, fileOnly, locked := newSigner(t), newSigner(t), newSigner(t), newSigner(t), newSigner(t)
	ca := newSigner(t)
	cert := &ssh.Certificate{Key: fileOnly.PublicKey(), CertType: ssh.UserCert, ValidPrincipals: []string{"u"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	ids := []*identity{
		{path: "file", signer: fileOnly, pub: fileOnly.PublicKey()},
		{path: "shared", signer: nil, pub: shared.PublicKey(), encrypted: true}, // encrypted, the agent holds it
		{path: "locked", pub: locked.PublicKey(), encrypted: true},              // encrypted, nobody holds it
	}
	held := []ssh.Signer{a1, shared, a2}
	name := map[string]string{string(a1.PublicKey().Marshal()): "a1", string(a2.PublicKey().Marshal()): "a2",
		string(shared.PublicKey().Marshal()): "shared", string(fileOnly.PublicKey().Marshal()): "file", string(cert.Marshal()): "file-cert"}
	for _, tc := range []struct {
		only bool
		want []string
	}{
		{false, []string{"shared", "a1", "a2", "file-cert", "file"}},
		{true, []string{"shared", "file-cert", "file"}},
	} {
		var got []string
		for _, s := range orderSigners(ids, []*ssh.Certificate{cert}, held, tc.only) {
			got = append(got, name[string(s.PublicKey().Marshal())])
		}
		if len(got) != len(tc.want) {
			t.Fatalf("IdentitiesOnly=%v: %v, want %v", tc.only, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("IdentitiesOnly=%v: %v, want %v", tc.only, got, tc.want)
			}
		}
	}
}

// TestPreparePassphrase: an encrypted identity is asked for once for the
// whole scan (a wrong answer is asked again), not at all under BatchMode.
func TestPreparePassphrase(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte("right"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	for _, tc := range []struct {
		name    string
		conf    string
		answers []string
		asked   int
		ok      bool
	}{
		{"wrong then right", "", []string{"wrong", "right"}, 2, true},
		{"BatchMode: never asked", "  BatchMode yes\n", []string{"right"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(conf, []byte("Host *\n  IdentityFile "+key+"\n"+tc.conf), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := sshconfig.Load(sshconfig.Options{File: conf, Home: dir, LocalUser: "me"})
			if err != nil {
				t.Fatal(err)
			}
			c := NewSSH()
			c.Config = cfg
			var warns []string
			c.Warn = func(s string) { warns = append(warns, s) }
			asked := 0
			c.Passphrase = func(prompt string) ([]byte, error) {
				if !strings.Contains(prompt, key) {
					t.Errorf("prompt %q does not name the key", prompt)
				}
				a := tc.answers[asked]
				asked++
				return []byte(a), nil
			}
			targets := []Target{{Name: "a", Address: "a"}, {Name: "b", Address: "b", ProxyJump: "c"}}
			c.Prepare(context.Background(), targets)
			c.Prepare(context.Background(), targets)
			id := c.loadIdentity(key, true)
			if asked != tc.asked || (id.signer != nil) != tc.ok {
				t.Errorf("asked %d times (want %d), unlocked %v (want %v), warnings %q", asked, tc.asked, id.signer != nil, tc.ok, warns)
			}
			for _, w := range warns {
				if strings.Contains(w, "right") {
					t.Errorf("a warning carries the passphrase: %q", w)
				}
			}
		})
	}
}
