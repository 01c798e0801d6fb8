package main

import (
	"os"
	"path/filepath"
	"testing"
)

// waivers check's output, exit codes and errors are in
// testdata/script/waivers.txtar.

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
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
