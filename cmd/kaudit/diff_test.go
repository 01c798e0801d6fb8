package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/report/diff"
)

func TestDiffTable(t *testing.T) {
	code, out, stderr := runCLI(t, "diff", diffOld, diffNew)
	if code != ExitOK {
		t.Fatalf("exit %d without --fail-on-new: %s", code, stderr)
	}
	for _, want := range []string{
		"NEWLY FAILING (2)", "NEWLY PASSING (2)", "STILL FAILING (1)", "OTHER STATUS CHANGES (1)",
		"HOSTS ADDED (1)\n  kafka-d4", "HOSTS REMOVED (1)\n  kafka-c3",
		"kafka-a1  kafka.version", "2.8.1", "3.6.1", "sysctl.net.core.somaxconn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestDiffFailOnNew(t *testing.T) {
	code, _, stderr := runCLI(t, "diff", diffOld, diffNew, "--fail-on-new")
	if code != ExitFindings || !strings.Contains(stderr, "2 host × rule newly failing") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// Reversed, tcp-timestamps and somaxconn newly fail... and kafka-backlog-hardcoded too.
	code, _, _ = runCLI(t, "diff", diffNew, diffOld, "--fail-on-new")
	if code != ExitFindings {
		t.Errorf("reversed: exit %d", code)
	}
	// Identical scans: nothing newly fails.
	if code, out, _ := runCLI(t, "diff", diffNew, diffNew, "--fail-on-new"); code != ExitOK || !strings.Contains(out, "NEWLY FAILING (0)") {
		t.Errorf("self: exit %d\n%s", code, out)
	}
	// Waiving what newly fails makes the gate pass.
	w := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(w, []byte("waivers:\n  - rule: tcp-timestamps\n    hosts: [kafka-a1]\n    reason: r\n  - rule: somaxconn\n    hosts: [kafka-d4]\n    reason: r\n"), 0o600) //nolint:errcheck
	if code, _, stderr := runCLI(t, "diff", diffOld, diffNew, "--fail-on-new", "--waivers", w); code != ExitOK {
		t.Errorf("waived: exit %d %s", code, stderr)
	}
}

func TestDiffJSONToFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "d.json")
	code, stdout, stderr := runCLI(t, "diff", "--format", "json", "-o", out, diffOld, diffNew)
	if code != ExitOK || stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d diff.Diff
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.NewlyFailing) != 2 || len(d.HostsAdded) != 1 || len(d.Facts) != 4 {
		t.Errorf("%+v", d)
	}
}

func TestDiffUsage(t *testing.T) {
	for _, args := range [][]string{
		{"diff"},
		{"diff", diffOld},
		{"diff", diffOld, diffNew, "-f", "html"},
		{"diff", diffOld, "/nonexistent/new.json"},
		{"diff", diffOld, "main.go"},
	} {
		if code, _, _ := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, ExitUsage)
		}
	}
}
