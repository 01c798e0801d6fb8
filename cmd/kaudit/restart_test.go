package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestartRefusedWithoutBootstrap: fix --restart and rollback
// --restart are usage errors (exit 2, a hint) without --bootstrap (fix:
// or without --apply); nothing is contacted.
func TestRestartRefusedWithoutBootstrap(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "inv.yaml")
	if err := os.WriteFile(inv, []byte("hosts:\n  - name: b1\n    address: 192.0.2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", inv, "--apply", "--yes", "--restart"}, "--restart needs --bootstrap"},
		{[]string{"fix", "--bootstrap", "127.0.0.1:9", "--restart"}, "give --apply too"},
		{[]string{"fix", inv, "--apply", "--yes", "--restart", "--bootstrap", "127.0.0.1:9", "--watch", "-1s"}, "--watch must be more than 0"},
		{[]string{"rollback", inv, "--run", "20260101T000000Z-0000000a", "--yes", "--restart"}, "--restart needs --bootstrap"},
		{[]string{"rollback", "--bootstrap", "127.0.0.1:9", "--run", "20260101T000000Z-0000000a", "--restart", "--restart-timeout", "-1s"}, "--restart-timeout and --watch must be more than 0"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, _, stderr := runCLI(t, "fix", inv, "--apply", "--yes", "--restart"); !strings.Contains(stderr, "hint: give --bootstrap") {
		t.Errorf("no hint: %q", stderr)
	}
}
