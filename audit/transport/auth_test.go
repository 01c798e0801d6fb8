package transport

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"golang.org/x/crypto/ssh"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

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
