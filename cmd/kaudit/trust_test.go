package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/kaudit/kaudit/test/simhost"
)

// trustInventory serves "old" (in known_hosts), "new1", "new2" (not) and
// "moved" (another key in known_hosts), and writes a kaudit inventory.
func trustInventory(t *testing.T) (inv, kh string, f *simhost.Fleet) {
	t.Helper()
	var hosts []*simhost.Host
	for _, n := range []string{"old", "new1", "new2", "moved"} {
		h := simhost.DemoFleet()[0]
		h.Name = n
		hosts = append(hosts, h)
	}
	dir := t.TempDir()
	f, err := simhost.Start(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	kh = filepath.Join(dir, "trust_known_hosts")
	lines := knownhosts.Line([]string{knownhosts.Normalize(f.Servers[0].Addr)}, f.Servers[0].HostKey) + "\n" +
		knownhosts.Line([]string{knownhosts.Normalize(f.Servers[3].Addr)}, simhost.NewHostKey().PublicKey()) + "\n"
	if err := os.WriteFile(kh, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: kafka\n  identity_files: [%q]\n  use_agent: false\n  known_hosts: [%q]\nhosts:\n", f.KeyFile, kh)
	for _, h := range f.Hosts {
		fmt.Fprintf(&b, "  %s: {address: 127.0.0.1, port: %d}\n", h.Name, h.Port)
	}
	inv = filepath.Join(dir, "inv.yaml")
	if err := os.WriteFile(inv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv, kh, f
}

func TestTrustCommand(t *testing.T) {
	inv, kh, f := trustInventory(t)
	before, _ := os.ReadFile(kh)
	fp := ssh.FingerprintSHA256(f.Servers[1].HostKey)

	// No terminal (go test's stdin) and no --yes: nothing is written.
	code, out, errOut := runCLI(t, "trust", inv)
	if code != ExitUsage || !strings.Contains(errOut, "2 new host keys and no terminal to confirm on: nothing was written") {
		t.Fatalf("no --yes: exit %d, stderr %s", code, errOut)
	}
	if !strings.Contains(out, fp) || !strings.Contains(out, "new") {
		t.Errorf("fingerprints not shown before asking:\n%s", out)
	}
	if after, _ := os.ReadFile(kh); string(after) != string(before) {
		t.Fatal("known_hosts written without confirmation")
	}

	// --yes records the new keys; the changed one is loud, kept, and exit 3.
	code, out, errOut = runCLI(t, "trust", inv, "--yes")
	if code != ExitUnaudited {
		t.Fatalf("--yes: exit %d, want %d\n%s\n%s", code, ExitUnaudited, out, errOut)
	}
	if !strings.Contains(errOut, "HOST KEY CHANGED for moved") || !strings.Contains(errOut, "NOT overwritten") || !strings.Contains(out, "recorded 2 of 2 new keys") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	after, _ := os.ReadFile(kh)
	if !strings.HasPrefix(string(after), string(before)) || strings.Count(string(after), "\n") != 4 {
		t.Fatalf("known_hosts after --yes:\n%s", after)
	}

	// Everything but the changed host is trusted now: exit 0, nothing asked.
	code, out, errOut = runCLI(t, "trust", inv, "--limit", "!moved")
	if code != ExitOK || strings.Count(out, " known") != 3 {
		t.Errorf("second run: exit %d\n%s\n%s", code, out, errOut)
	}
	// And a scan of those hosts passes the strict host-key check.
	code, out, errOut = runCLI(t, "scan", inv, "--limit", "!moved", "--format", "json")
	if r := decode(t, out); r.Summary.Unreachable != 0 {
		t.Errorf("scan after trust: exit %d, %+v\n%s", code, r.Summary, errOut)
	}
}
