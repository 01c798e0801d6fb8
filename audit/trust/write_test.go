package trust

import (
	"crypto/ed25519"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/transport"
)

func testKey(t *testing.T) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestWrite(t *testing.T) {
	key := testKey(t)
	fp := ssh.FingerprintSHA256(key)
	for _, c := range []struct {
		name string
		e    Entry
		want string // the line after the header, spaces squeezed
	}{
		{"new", Entry{Host: "b1", Name: "10.0.0.1", Key: key, Status: New}, "b1 10.0.0.1 ssh-ed25519 " + fp + " new"},
		{"bastion", Entry{Host: "jump", Bastion: true, Name: "j", Key: key, Status: Known}, "(bastion) jump j ssh-ed25519 " + fp + " known"},
		{"changed names the other line", Entry{Host: "b2", Name: "[h]:22", Key: key, Status: Changed, Where: []string{"kh:3", "kh:9"}},
			"b2 [h]:22 ssh-ed25519 " + fp + " CHANGED kh:3, kh:9"},
		{"failed shows the error", Entry{Host: "b3", Name: "b3", Status: Failed, Err: &transport.Error{Msg: "connection refused"}}, "b3 b3 unreachable: connection refused"},
		{"host text is made plain", Entry{Host: "b4", Name: "b4", Status: Failed, Err: &transport.Error{Msg: "bad\x1b[31m\nbanner"}}, `b4 b4 unreachable: bad\x1b[31m\nbanner`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			Write(&b, []Entry{c.e})
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "HOST KNOWN_HOSTS NAME KEY TYPE FINGERPRINT STATUS" {
				t.Fatalf("output:\n%s", b.String())
			}
			if got := strings.Join(strings.Fields(lines[1]), " "); got != c.want {
				t.Errorf("line\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestUntrustedAndWarnings(t *testing.T) {
	key := testKey(t)
	entries := []Entry{
		{Host: "a", Status: Known}, {Host: "b", Status: New}, {Host: "c", Status: Recorded},
		{Host: "d", Status: Certified}, {Host: "e", Status: Local},
		{Host: "f", Name: "[10.0.0.6]:2222", Key: key, Status: Changed, Where: []string{"/kh:4"}},
		{Host: "g", Status: Revoked}, {Host: "h", Status: BadCert}, {Host: "i", Status: Failed},
	}
	if got := Untrusted(entries); got != 4 {
		t.Errorf("Untrusted = %d, want 4 (changed, revoked, bad-cert, unreachable)", got)
	}
	if got := Count(entries, Recorded); got != 1 {
		t.Errorf("Count(Recorded) = %d, want 1", got)
	}
	w := ChangedWarnings(entries)
	if len(w) != 1 {
		t.Fatalf("ChangedWarnings = %q, want one", w)
	}
	for _, part := range []string{"HOST KEY CHANGED for f ([10.0.0.6]:2222)", ssh.FingerprintSHA256(key), "at /kh:4", "NOT overwritten", "ssh-keygen -R '[10.0.0.6]:2222'"} {
		if !strings.Contains(w[0], part) {
			t.Errorf("warning lacks %q: %s", part, w[0])
		}
	}
	if Untrusted(entries[:5]) != 0 || ChangedWarnings(entries[:5]) != nil {
		t.Error("trusted entries counted as untrusted")
	}
}
