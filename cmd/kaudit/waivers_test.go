package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// withClock is a clock stopped at at (RFC 3339), for runCLIAt.
func withClock(t *testing.T, at string) func() time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339, at)
	if err != nil {
		t.Fatal(err)
	}
	return func() time.Time { return ts }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const waiverFile = `waivers:
  - rule: kernel-synack-wscale
    hosts: [kafka-centos7-*]
    reason: kernel upgrade CHG-1234
    owner: platform
    expires: 2026-12-31
  - rule: somaxconn
    groups: [legacy]
    reason: decommissioned soon
    expires: 2026-12-05
  - rule: nic-ring
    hosts: ['*']
    reason: virtio everywhere
`

func TestWaiversCheck(t *testing.T) {
	p := writeFile(t, "w.yaml", waiverFile)
	now := withClock(t, "2026-12-01T08:00:00Z")
	code, out, stderr := runCLIAt(t, now, "waivers", "check", p)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"w.yaml:2", "active", "kernel-synack-wscale", "kafka-centos7-*", "platform", "2026-12-31",
		"expires in 4d", "@legacy", "active (no expiry)", "3 waiver(s), 0 expired"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	now = withClock(t, "2027-01-01T00:00:01Z")
	code, out, stderr = runCLIAt(t, now, "waivers", "check", p)
	if code != ExitFindings || strings.Count(out, "EXPIRED") != 2 || !strings.Contains(stderr, "2 waiver(s) expired") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

func TestWaiversCheckInvalid(t *testing.T) {
	p := writeFile(t, "bad.yaml", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n    expires: tomorrow\n")
	code, _, stderr := runCLI(t, "waivers", "check", p)
	if code != ExitUsage {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{p + ":2: waivers[0]: reason is required", p + ":4: waivers[0].expires: expected a date YYYY-MM-DD"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code, _, _ := runCLI(t, "waivers", "check"); code != ExitUsage {
		t.Errorf("no file: exit %d", code)
	}
	if code, _, _ := runCLI(t, "waivers", "check", "/nonexistent.yaml"); code != ExitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}

func TestWithWaiversFlagNoDuplicate(t *testing.T) {
	flags := reportCommand(env{}).Flags
	n := 0
	for _, f := range flags {
		if f.Names()[0] == waiversFlagName {
			n++
		}
	}
	if n != 1 {
		t.Errorf("--waivers %d times", n)
	}
}

// --soon works before and after the file, as every command's flags do:
// the flags of a subcommand (waivers check) are found, not only those of
// the top-level command (before, both orders were "flag provided but not
// defined: -soon").
func TestWaiversCheckSoon(t *testing.T) {
	p := writeFile(t, "w.yaml", waiverFile)
	now := withClock(t, "2026-12-01T08:00:00Z")
	for _, args := range [][]string{{"waivers", "check", "--soon", "40", p}, {"waivers", "check", p, "--soon", "40"}} {
		code, out, stderr := runCLIAt(t, now, args...)
		if code != ExitOK || !strings.Contains(out, "expires in 30d") || !strings.Contains(out, "expires in 4d") {
			t.Errorf("%q: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	if code, _, _ := runCLIAt(t, now, "waivers", "check", p, "--soon"); code != ExitUsage {
		t.Errorf("--soon without DAYS: exit %d", code)
	}
}
