package transport

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kaudit/kaudit/audit/facts"
)

func newSigner(t testing.TB) ssh.Signer {
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

func authorized(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// hostCert signs key as a host certificate for principals, valid from
// after to before.
func hostCert(t *testing.T, ca ssh.Signer, key ssh.PublicKey, typ uint32, after, before time.Time, principals ...string) *ssh.Certificate {
	t.Helper()
	c := &ssh.Certificate{Key: key, CertType: typ, ValidPrincipals: principals, KeyId: "test",
		ValidAfter: uint64(after.Unix()), ValidBefore: uint64(before.Unix())}
	if err := c.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// futureKey is a key blob of a type x/crypto cannot parse.
var futureKey = base64.StdEncoding.EncodeToString(append([]byte("\x00\x00\x00\x0assh-future"), 0, 0, 0, 1, 'x'))

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	a, b, c, ca, otherCA, revoked := newSigner(t), newSigner(t), newSigner(t), newSigner(t), newSigner(t), newSigner(t)
	A, B := authorized(a.PublicKey()), authorized(b.PublicKey())
	now := time.Now()
	good := hostCert(t, ca, c.PublicKey(), ssh.HostCert, now.Add(-time.Hour), now.Add(time.Hour), "ca-host.example.com")
	expired := hostCert(t, ca, c.PublicKey(), ssh.HostCert, now.Add(-2*time.Hour), now.Add(-time.Hour), "ca-host.example.com")
	userCert := hostCert(t, ca, c.PublicKey(), ssh.UserCert, now.Add(-time.Hour), now.Add(time.Hour), "ca-host.example.com")
	foreign := hostCert(t, otherCA, a.PublicKey(), ssh.HostCert, now.Add(-time.Hour), now.Add(time.Hour), "ca-host.example.com")
	revokedCA := hostCert(t, revoked, c.PublicKey(), ssh.HostCert, now.Add(-time.Hour), now.Add(time.Hour), "rev.example.com")

	user := writeFile(t, dir, "known_hosts", strings.Join([]string{
		"# a comment, then a blank line",
		"",
		"plain.example.com,10.0.0.1 " + A,
		"[port.example.com]:2222 " + A,
		knownhosts.HashHostname("hashed.example.com") + " " + A,
		knownhosts.HashHostname("[hashed.example.com]:2200") + " " + B,
		"*.wild.example.com,!bad.wild.example.com " + A,
		"@cert-authority *.example.com " + authorized(ca.PublicKey()),
		"@cert-authority rev.example.com " + authorized(revoked.PublicKey()),
		"@revoked * " + authorized(revoked.PublicKey()),
		"@revoked * " + B,
		"MiXeD.Example.COM " + A,
		"alias-name " + A,
		"future.example.com ssh-future " + futureKey + " a key type x/crypto does not know: skipped",
	}, "\n"))
	global := writeFile(t, dir, "ssh_known_hosts", "global.example.com "+A+"\n")
	files := KnownHostsFiles{User: []string{user}, Global: []string{global}}

	tests := []struct {
		name string
		host string
		port int
		key  ssh.PublicKey
		want KeyStatus
	}{
		{"plain", "plain.example.com", 22, a.PublicKey(), KeyKnown},
		{"plain by second pattern", "10.0.0.1", 22, a.PublicKey(), KeyKnown},
		{"plain other key", "plain.example.com", 22, c.PublicKey(), KeyChanged},
		{"plain on another port is another name", "plain.example.com", 2222, a.PublicKey(), KeyUnknown},
		{"port", "port.example.com", 2222, a.PublicKey(), KeyKnown},
		{"port 22 spelt 0", "plain.example.com", 0, a.PublicKey(), KeyKnown},
		{"hashed", "hashed.example.com", 22, a.PublicKey(), KeyKnown},
		{"hashed changed", "hashed.example.com", 22, c.PublicKey(), KeyChanged},
		{"hashed port", "hashed.example.com", 2200, b.PublicKey(), KeyRevoked},
		{"wildcard", "x.wild.example.com", 22, a.PublicKey(), KeyKnown},
		{"negated", "bad.wild.example.com", 22, a.PublicKey(), KeyUnknown},
		{"case-insensitive", "mixed.example.com", 22, a.PublicKey(), KeyKnown},
		{"alias", "ALIAS-NAME", 0, a.PublicKey(), KeyKnown},
		{"global file", "global.example.com", 22, a.PublicKey(), KeyKnown},
		{"unknown", "nowhere.example.org", 22, a.PublicKey(), KeyUnknown},
		{"revoked anywhere", "plain.example.com", 22, b.PublicKey(), KeyRevoked},
		{"cert from CA", "ca-host.example.com", 22, good, KeyCertified},
		{"cert from CA on another port", "ca-host.example.com", 2222, good, KeyUnknown},
		{"cert wrong principal", "other.example.com", 22, good, KeyBadCert},
		{"cert expired", "ca-host.example.com", 22, expired, KeyBadCert},
		{"user cert as host cert", "ca-host.example.com", 22, userCert, KeyBadCert},
		{"cert from unknown CA falls back to its key", "plain.example.com", 22, foreign, KeyKnown},
		{"cert signed by revoked CA", "rev.example.com", 22, revokedCA, KeyRevoked},
	}
	hk := NewHostKeys()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := hk.Check(tc.host, tc.port, files, tc.key)
			if v.Status != tc.want {
				t.Fatalf("Check(%s, %d) = %+v, want status %d", tc.host, tc.port, v, tc.want)
			}
			if tc.want == KeyChanged && (len(v.Where) == 0 || !strings.HasPrefix(v.Where[0], user+":")) {
				t.Errorf("changed key: Where = %v, want FILE:LINE of the recorded key", v.Where)
			}
		})
	}
	if v := hk.Check("hashed.example.com", 22, files, c.PublicKey()); v.Where[0] != user+":5" {
		t.Errorf("hashed line reported at %v, want %s:5", v.Where, user)
	}
}

func TestCheckMalformedLine(t *testing.T) {
	dir := t.TempDir()
	a := newSigner(t)
	p := writeFile(t, dir, "known_hosts", "ok.example.com "+authorized(a.PublicKey())+"\nbroken.example.com ssh-ed25519 !!notbase64\n")
	v := NewHostKeys().Check("ok.example.com", 22, KnownHostsFiles{User: []string{p}}, a.PublicKey())
	if v.Status != KeyFileError || !strings.Contains(v.Err.Error(), p+":2:") {
		t.Fatalf("got %+v, want a file error naming %s:2", v, p)
	}
	err := v.asError(a.PublicKey(), KnownHostsFiles{User: []string{p}})
	if e := AsError(err); e.Kind != facts.KindHostKey || !strings.Contains(e.Msg, "fix or delete that line") {
		t.Errorf("error %v: want a hostkey error saying what to do", err)
	}
}

func TestAlgorithms(t *testing.T) {
	dir := t.TempDir()
	ed, ca := newSigner(t), newSigner(t)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaPub, err := ssh.NewPublicKey(&rk.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, dir, "known_hosts", strings.Join([]string{
		"ed.example.com " + authorized(ed.PublicKey()),
		"rsa.example.com " + authorized(rsaPub),
		"@cert-authority *.ca.example.com " + authorized(ca.PublicKey()),
	}, "\n"))
	files := KnownHostsFiles{User: []string{p}}
	hk := NewHostKeys()
	tests := []struct {
		host  string
		first []string
	}{
		{"ed.example.com", []string{ssh.KeyAlgoED25519, ssh.CertAlgoED25519v01}},
		{"rsa.example.com", []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA, ssh.CertAlgoED25519v01}},
		{"h.ca.example.com", certAlgos},
		{"unknown.example.com", openSSHHostKeyOrder},
	}
	for _, tc := range tests {
		got := hk.Algorithms(tc.host, 22, files)
		if !slices.Equal(got[:len(tc.first)], tc.first) {
			t.Errorf("Algorithms(%s) = %v, want it to start with %v", tc.host, got, tc.first)
		}
		if len(got) != len(openSSHHostKeyOrder) {
			t.Errorf("Algorithms(%s) has %d entries, want every supported one (%d) once", tc.host, len(got), len(openSSHHostKeyOrder))
		}
	}
	// The reason for all this: Ed25519 comes before ECDSA for an unknown host.
	got := hk.Algorithms("unknown.example.com", 22, files)
	if slices.Index(got, ssh.KeyAlgoED25519) > slices.Index(got, ssh.KeyAlgoECDSA256) {
		t.Errorf("unknown host: %v offers ECDSA before Ed25519", got)
	}
}

func TestAcceptNewThenChanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "known_hosts") // the directory is created too
	files := KnownHostsFiles{User: []string{p}}
	a, b := newSigner(t), newSigner(t)
	hk := NewHostKeys()
	var recorded []string
	hk.Recorded = func(name string, key ssh.PublicKey, file string) {
		recorded = append(recorded, name+" "+ssh.FingerprintSHA256(key)+" "+file)
	}
	cb := hk.Callback("new.example.com", 2222, files, PolicyAcceptNew)
	if err := cb("ignored:1", nil, a.PublicKey()); err != nil {
		t.Fatalf("accept-new of an unknown host: %v", err)
	}
	if err := cb("ignored:1", nil, a.PublicKey()); err != nil {
		t.Fatalf("second connection with the recorded key: %v", err)
	}
	// Recorded is told once, of the key written: never a silent trust.
	if want := "[new.example.com]:2222 " + ssh.FingerprintSHA256(a.PublicKey()) + " " + p; len(recorded) != 1 || recorded[0] != want {
		t.Errorf("recorded %q, want [%q]", recorded, want)
	}
	err := cb("ignored:1", nil, b.PublicKey())
	if e := AsError(err); err == nil || e.Kind != facts.KindHostKey || !strings.Contains(e.Msg, "HOST KEY CHANGED for [new.example.com]:2222") {
		t.Fatalf("other key after accept-new: %v, want HOST KEY CHANGED", err)
	}
	data, _ := os.ReadFile(p)
	if want := knownhosts.Line([]string{"[new.example.com]:2222"}, a.PublicKey()) + "\n"; string(data) != want {
		t.Errorf("known_hosts = %q, want exactly %q", data, want)
	}
	// A fresh verifier (another run) sees the line; strict now passes.
	if err := NewHostKeys().Callback("new.example.com", 2222, files, PolicyStrict)("", nil, a.PublicKey()); err != nil {
		t.Errorf("strict after accept-new: %v", err)
	}
	// Strict never writes.
	err = NewHostKeys().Callback("other.example.com", 22, files, PolicyStrict)("", nil, a.PublicKey())
	if e := AsError(err); err == nil || !strings.Contains(e.Msg, "unknown host key for other.example.com") {
		t.Errorf("strict, unknown host: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, data) {
		t.Errorf("strict changed known_hosts")
	}
}

func TestAcceptNewEndsAnUnterminatedLine(t *testing.T) {
	dir := t.TempDir()
	a, b := newSigner(t), newSigner(t)
	first := "old.example.com " + authorized(a.PublicKey()) // no newline at the end
	p := writeFile(t, dir, "known_hosts", first)
	files := KnownHostsFiles{User: []string{p}}
	hk := NewHostKeys()
	if err := hk.Callback("new.example.com", 22, files, PolicyAcceptNew)("", nil, b.PublicKey()); err != nil {
		t.Fatal(err)
	}
	want := first + "\n" + knownhosts.Line([]string{"new.example.com"}, b.PublicKey()) + "\n"
	if data, _ := os.ReadFile(p); string(data) != want {
		t.Fatalf("known_hosts = %q, want %q", data, want)
	}
	if v := hk.Check("old.example.com", 22, files, b.PublicKey()); v.Status != KeyChanged || v.Where[0] != p+":1" {
		t.Errorf("line numbers after an append: %+v", v)
	}
	if v := hk.Check("new.example.com", 22, files, a.PublicKey()); v.Status != KeyChanged || v.Where[0] != p+":2" {
		t.Errorf("line numbers after an append: %+v", v)
	}
}

// appendHosts accepts n new hosts named prefix-i through fresh verifiers
// sharing nothing (as separate runs would), from goroutines.
func appendHosts(t testing.TB, path, prefix string, n int) {
	files := KnownHostsFiles{User: []string{path}}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := newSigner(t)
			hk := NewHostKeys() // its own index, like another process
			name := prefix + "-" + strconv.Itoa(i)
			if err := hk.Callback(name, 22, files, PolicyAcceptNew)("", nil, s.PublicKey()); err != nil {
				errs <- err
			}
			// The same host again, concurrently with the others: never a second line.
			if err := hk.Callback(name, 22, files, PolicyAcceptNew)("", nil, s.PublicKey()); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAcceptNewConcurrentAppends runs appenders in this process (200
// goroutines, each with its own verifier) and in 3 child processes at the
// same time, then checks the file line by line.
func TestAcceptNewConcurrentAppends(t *testing.T) {
	if p := os.Getenv("KAUDIT_APPEND_CHILD"); p != "" {
		appendHosts(t, p, os.Getenv("KAUDIT_APPEND_PREFIX"), 200)
		return
	}
	path := filepath.Join(t.TempDir(), "known_hosts")
	var cmds []*exec.Cmd
	for i := 0; i < 3; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptNewConcurrentAppends$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KAUDIT_APPEND_CHILD="+path, "KAUDIT_APPEND_PREFIX=proc"+strconv.Itoa(i))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("child output:\n%s", out.String())
			}
		})
	}
	appendHosts(t, path, "self", 200)
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child appender: %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		_, hosts, _, _, rest, err := ssh.ParseKnownHosts(append(sc.Bytes(), '\n'))
		if err != nil || len(hosts) != 1 || len(bytes.TrimSpace(rest)) != 0 {
			t.Fatalf("line %d is not one whole entry: %q (%v)", n, sc.Text(), err)
		}
		if seen[hosts[0]] {
			t.Fatalf("line %d: %s recorded twice", n, hosts[0])
		}
		seen[hosts[0]] = true
	}
	if n != 800 {
		t.Fatalf("%d lines, want 800 (4 writers x 200 hosts)", n)
	}
}

// knownHosts10k writes n plain entries (host-i) and returns the path and
// the key of the last one.
func knownHostsN(b *testing.B, n int, hashed bool) (string, ssh.PublicKey) {
	var buf bytes.Buffer
	key := newSigner(b).PublicKey()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("broker-%05d.kafka.example.com", i)
		if hashed {
			name = knownhosts.HashHostname(name)
		}
		buf.WriteString(knownhosts.Line([]string{name}, key) + "\n")
	}
	return writeFile(b, b.TempDir(), "known_hosts", buf.String()), key
}

// BenchmarkLookup10k: the cost of one host-key check against 10,000
// known_hosts entries, for a host near the end of the file. Each iteration
// asks for another host, as a scan does (the per-name cache never helps).
func BenchmarkLookup10k(b *testing.B) {
	const n = 10000
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("broker-%05d.kafka.example.com", n-1-i)
	}
	for _, hashed := range []bool{false, true} {
		path, key := knownHostsN(b, n, hashed)
		kind := map[bool]string{false: "plain", true: "hashed"}[hashed]
		b.Run("kaudit-index/"+kind, func(b *testing.B) {
			files := KnownHostsFiles{User: []string{path}}
			hk := NewHostKeys()
			hk.Check("warm-up", 22, files, key) // the one-time parse is not per lookup
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f := hk.file(path)
				f.cache.Clear()
				if v := hk.Check(names[i%len(names)], 22, files, key); v.Status != KeyKnown {
					b.Fatalf("%+v", v)
				}
			}
		})
		b.Run("x-crypto-knownhosts/"+kind, func(b *testing.B) {
			cb, err := knownhosts.New(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := cb(names[i%len(names)]+":22", dummyAddr, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var dummyAddr = &netAddr{}

type netAddr struct{}

func (netAddr) Network() string { return "tcp" }
func (netAddr) String() string  { return "192.0.2.1:22" }

func TestAcceptNewHashed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "known_hosts")
	files := KnownHostsFiles{User: []string{p}, Hash: true}
	a := newSigner(t)
	if err := NewHostKeys().Callback("h.example.com", 2222, files, PolicyAcceptNew)("", nil, a.PublicKey()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if !bytes.HasPrefix(data, []byte("|1|")) || bytes.Contains(data, []byte("example")) {
		t.Fatalf("HashKnownHosts: wrote %q", data)
	}
	if v := NewHostKeys().Check("h.example.com", 2222, files, a.PublicKey()); v.Status != KeyKnown {
		t.Errorf("hashed line written by accept-new not found: %+v", v)
	}
}
