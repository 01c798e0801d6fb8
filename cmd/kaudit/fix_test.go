package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/test/simhost"
)

// TestFixRefusedApplyWritesNoJournal: fix --apply refused (stdin is not a
// terminal, no --yes) starts no run; testdata/script/fix.txtar shows the
// messages.
func TestFixRefusedApplyWritesNoJournal(t *testing.T) {
	inv := writeInventory(t, []*simhost.Host{simhost.DemoFleet()[0]})
	jdir := t.TempDir()
	if code, _, errOut := runCLI(t, "fix", inv, "--apply", "--journal-dir", jdir); code != ExitUsage {
		t.Fatalf("fix --apply without --yes: exit %d\n%s", code, errOut)
	}
	if entries, _ := os.ReadDir(jdir); len(entries) != 0 {
		t.Errorf("a refused apply wrote %d journal(s)", len(entries))
	}
}

// TestRollbackUsage: rollback of a journalled run that changed nothing,
// and of one with backups but no terminal and no --yes. The usage errors
// (no inventory, no or a bad --run, no journal) are in
// testdata/script/rollback.txtar.
func TestRollbackUsage(t *testing.T) {
	inv := writeInventory(t, []*simhost.Host{compliant()})
	jdir := t.TempDir()
	// A run that changed nothing: nothing to roll back, no confirmation needed.
	j := &remediate.Journal{RunID: "20260101T000000Z-00000002", StartedAt: time.Now(),
		Hosts: []remediate.HostJournal{{Host: compliant().Name, Status: remediate.StatusUnchanged, Changes: []remediate.Change{}}}}
	if err := j.Save(filepath.Join(jdir, j.RunID+".json")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "rollback", inv, "--run", j.RunID, "--journal-dir", jdir)
	if code != ExitOK || !strings.Contains(out, "nothing to roll back") {
		t.Errorf("empty run: exit %d %q", code, out)
	}
	// A run with backups: without --yes and a terminal, refused.
	j.RunID = "20260101T000000Z-00000003"
	j.Hosts[0].Runtime = []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}}
	if err := j.Save(filepath.Join(jdir, j.RunID+".json")); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "rollback", inv, "--run", j.RunID, "--journal-dir", jdir); code != ExitUsage || !strings.Contains(errOut, "add --yes") {
		t.Errorf("rollback without --yes: exit %d %q", code, errOut)
	}
}
