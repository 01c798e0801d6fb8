package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/test/simhost"
)

// countedFleet serves one compliant host and writes an inventory whose
// known_hosts is kh ("": the fleet's own file) with host_key_policy
// policy ("": strict). The fleet's servers count the connections made.
func countedFleet(t *testing.T, kh, policy string) (inv string, f *simhost.Fleet) {
	t.Helper()
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{compliant()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	if kh == "" {
		kh = f.KnownHosts
	}
	if policy == "" {
		policy = "strict"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%q]\n  known_hosts: [%q]\n  host_key_policy: %s\n  connect_timeout: 2s\nhosts:\n", f.KeyFile, kh, policy)
	for _, h := range f.Hosts {
		fmt.Fprintf(&b, "  %s: {address: 127.0.0.1, port: %d}\n", h.Name, h.Port)
	}
	inv = filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(inv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv, f
}

func accepted(f *simhost.Fleet) int {
	n := 0
	for _, s := range f.Servers {
		n += s.Accepted
	}
	return n
}

// TestBadWaiversBeforeAnyHost: a waiver file that is missing or malformed
// is a usage error naming the file and line, found before any host is
// contacted (it used to be read after every host was gathered).
func TestBadWaiversBeforeAnyHost(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	bad := writeFile(t, "bad.yaml", "waivers:\n  - rule: somaxcon\n    hosts: [a]\n    reason: r\n")
	syntax := writeFile(t, "syntax.yaml", "waivers:\n  - rule: somaxconn\n   hosts: [a\n")
	wants := map[string]string{
		missing: "kaudit: error: --waivers: " + missing + ": cannot read the waiver file: no such file or directory (hint: give the path of a YAML waiver file; docs/waivers.example.yaml shows the format)\n",
		bad:     "kaudit: error: --waivers: " + bad + `:2: waivers[0].rule: unknown rule "somaxcon" (hint: did you mean "somaxconn"?)` + "\n",
		syntax:  "kaudit: error: --waivers: " + syntax + ":1: invalid YAML: did not find expected '-' indicator (hint: docs/waivers.example.yaml shows the format)\n",
	}
	for file, want := range wants {
		for _, cmd := range []string{"scan", "probe"} {
			inv, f := countedFleet(t, "", "")
			code, out, errOut := runCLI(t, cmd, inv, "--waivers", file, "-f", "json")
			if code != ExitUsage || !strings.HasPrefix(errOut, want) || out != "" {
				t.Errorf("%s --waivers %s: exit %d, stdout %q, stderr\n%s\nwant exit 2 and a stderr starting\n%s", cmd, filepath.Base(file), code, out, errOut, want)
			}
			if n := accepted(f); n != 0 {
				t.Errorf("%s --waivers %s: %d connections made, want none", cmd, filepath.Base(file), n)
			}
		}
		for _, args := range [][]string{
			{"demo", "--waivers", file},
			{"report", reportFixture, "--waivers", file},
			{"diff", diffOld, diffNew, "--waivers", file},
		} {
			code, out, errOut := runCLI(t, args...)
			if code != ExitUsage || !strings.HasPrefix(errOut, want) || out != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr\n%s\nwant exit 2 and a stderr starting\n%s", args, code, out, errOut, want)
			}
		}
	}
}

// TestKnownHostsNotAFile: a known_hosts that is a directory or cannot be
// read is a usage error before any host is contacted, in every command
// that connects (it used to fail each host as hostkey, exit 3). A missing
// one is still an empty file: accept-new records the key in it, strict
// fails the host as hostkey.
func TestKnownHostsNotAFile(t *testing.T) {
	dir := t.TempDir()
	plain := writeFile(t, "plain", "")
	cases := []struct{ name, kh, want string }{
		{"directory", dir, "kaudit: error: %s:9: host kafka-bookworm-03: known_hosts " + dir + ": is a directory, not a file (hint: give known_hosts the path of a file in it, e.g. " + dir + "/known_hosts); no host was contacted\n"},
		{"under a file", plain + "/known_hosts", "kaudit: error: %s:9: host kafka-bookworm-03: known_hosts " + plain + "/known_hosts: cannot be read: not a directory (hint: give known_hosts the path of a readable file, e.g. ~/.ssh/known_hosts); no host was contacted\n"},
		{"malformed", writeFile(t, "kh", "127.0.0.1 ssh-ed25519 AAAA!!!\n"), "kaudit: error: %s:9: host kafka-bookworm-03: known_hosts "},
	}
	for _, tc := range cases {
		for _, args := range [][]string{{"scan"}, {"probe"}, {"trust", "--yes"}, {"fix"}, {"fix", "--apply", "--yes", "--journal-dir", t.TempDir()}} {
			inv, f := countedFleet(t, tc.kh, "")
			code, out, errOut := runCLI(t, append(append([]string{}, args...), inv)...)
			want := fmt.Sprintf(tc.want, inv)
			if code != ExitUsage || !strings.HasPrefix(errOut, want) || out != "" {
				t.Errorf("%s: %v: exit %d, stdout %q, stderr\n%s\nwant exit 2 and a stderr starting\n%s", tc.name, args, code, out, errOut, want)
			}
			if n := accepted(f); n != 0 {
				t.Errorf("%s: %v: %d connections made, want none", tc.name, args, n)
			}
		}
	}

	// Missing: accept-new records the key and the scan passes; strict
	// fails the host as hostkey (exit 3), as before.
	kh := filepath.Join(t.TempDir(), "known_hosts")
	inv, _ := countedFleet(t, kh, "accept-new")
	if code, _, errOut := runCLI(t, "scan", inv, "-f", "json"); code != ExitOK {
		t.Errorf("missing known_hosts, accept-new: exit %d\n%s", code, errOut)
	}
	if b, err := os.ReadFile(kh); err != nil || strings.Count(string(b), "\n") != 1 {
		t.Errorf("accept-new did not record the key: %v %q", err, b)
	}
	inv, _ = countedFleet(t, filepath.Join(t.TempDir(), "known_hosts"), "")
	code, out, _ := runCLI(t, "scan", inv, "-f", "json")
	if r := decode(t, out); code != ExitUnaudited || r.Hosts[0].Error == nil || r.Hosts[0].Error.Kind != "hostkey" {
		t.Errorf("missing known_hosts, strict: exit %d, %+v", code, r.Hosts[0].Error)
	}
}

// TestDuplicateAnsibleHostWarned: a host listed in two groups with two
// addresses is scanned at the last (Ansible's merge order), with a warning
// naming both definitions and both addresses.
func TestDuplicateAnsibleHostWarned(t *testing.T) {
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{compliant()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	inv := fmt.Sprintf(`all:
  vars:
    ansible_user: kafka
    ansible_ssh_private_key_file: %s
    kaudit_known_hosts: [%s]
  children:
    east:
      hosts:
        broker-1: {ansible_host: 127.0.0.9, ansible_port: %d}
    west:
      hosts:
        broker-1: {ansible_host: 127.0.0.1}
`, f.KeyFile, f.KnownHosts, f.Hosts[0].Port)
	path := filepath.Join(dir, "hosts.yml")
	if err := os.WriteFile(path, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", path, "-f", "json")
	want := "kaudit: warning: " + path + ":9: host broker-1 is defined twice with different addresses: 127.0.0.9 at " + path + ":9, 127.0.0.1 at " + path +
		":12; Ansible uses the last one (127.0.0.1), and so does kaudit (hint: remove or correct one of the two)\n"
	if code != ExitOK || errOut != want {
		t.Errorf("exit %d, stderr\n%s\nwant\n%s", code, errOut, want)
	}
	if r := decode(t, out); len(r.Hosts) != 1 || r.Hosts[0].Address != "127.0.0.1" || r.Hosts[0].Error != nil {
		t.Errorf("hosts %+v", r.Hosts)
	}
}

// TestGarbageInventory: kaudit scan of 5 MB of random bytes is one usage
// error of at most 20 problems and a count, a few KB of stderr (it was
// one line per line of the file: 46.5 MB for a user's).
func TestGarbageInventory(t *testing.T) {
	b := make([]byte, 5<<20)
	for i := range b {
		b[i] = byte(i*7919 + i>>8*31 + i>>16)
	}
	path := filepath.Join(t.TempDir(), "inventory")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", path)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	last := lines[len(lines)-1]
	if code != ExitUsage || out != "" || len(errOut) > 16<<10 || len(lines) > 21 ||
		!strings.HasPrefix(last, "… and ") || !strings.Contains(last, " more problems in "+path) {
		t.Errorf("exit %d, stdout %d bytes, stderr %d bytes in %d lines, last %q", code, len(out), len(errOut), len(lines), last)
	}
}

// TestBadProfileBeforeAnyHost: a --profile that is missing, a directory
// or not YAML is a usage error naming it (and the line), before any host
// is contacted, in every command that scans.
func TestBadProfileBeforeAnyHost(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	syntax := writeFile(t, "p.yaml", "somaxconn:\n  min: [\n")
	const hint = "give a YAML file of thresholds, keys as in rules/profile.default.yaml; kaudit explain RULE shows a rule's)\n"
	wants := map[string]string{
		missing: "kaudit: error: --profile " + missing + ": cannot read the thresholds file: no such file or directory (hint: " + hint,
		dir:     "kaudit: error: --profile " + dir + ": cannot read the thresholds file: is a directory (hint: " + hint,
		syntax:  "kaudit: error: --profile " + syntax + ":2: invalid YAML: did not find expected node content (hint: " + hint,
	}
	for file, want := range wants {
		for _, cmd := range []string{"scan", "probe", "fix"} {
			inv, f := countedFleet(t, "", "")
			code, out, errOut := runCLI(t, cmd, inv, "--profile", file)
			if code != ExitUsage || errOut != want || out != "" {
				t.Errorf("%s --profile %s: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", cmd, file, code, out, errOut, want)
			}
			if n := accepted(f); n != 0 {
				t.Errorf("%s --profile %s: %d connections made, want none", cmd, file, n)
			}
		}
	}
}

// TestKnownHostsDirectoryFromSSHConfig: a UserKnownHostsFile that is a
// directory is found the same way, and the message says ssh_config names it.
func TestKnownHostsDirectoryFromSSHConfig(t *testing.T) {
	dir := t.TempDir()
	f, err := simhost.Start(dir, []*simhost.Host{compliant()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	khDir := t.TempDir()
	conf := writeFile(t, "ssh_config", fmt.Sprintf("Host *\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile none\n", khDir))
	inv := writeFile(t, "inventory.yaml", fmt.Sprintf("defaults:\n  user: kafka\n  use_agent: false\n  identity_files: [%q]\nhosts:\n  b1: {address: 127.0.0.1, port: %d}\n", f.KeyFile, f.Hosts[0].Port))
	code, out, errOut := runCLI(t, "scan", inv, "--ssh-config", conf)
	want := "kaudit: error: " + inv + ":6: host b1: known_hosts " + khDir + ": is a directory, not a file (hint: give known_hosts the path of a file in it, e.g. " + khDir +
		"/known_hosts) (the file is named by ssh_config: UserKnownHostsFile or GlobalKnownHostsFile); no host was contacted\n"
	if code != ExitUsage || errOut != want || out != "" {
		t.Errorf("exit %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errOut, want)
	}
	if n := accepted(f); n != 0 {
		t.Errorf("%d connections made, want none", n)
	}
}
