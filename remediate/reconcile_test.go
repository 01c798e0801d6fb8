package remediate

import (
	"strings"
	"testing"
)

// Reconcile keeps what the host's manifest holds as the journal says,
// with the manifest's values, and names every other owned item; an item
// the run did not change (ChangedNo) is neither.
func TestReconcile(t *testing.T) {
	sha := func(c string) string { return strings.Repeat(c, 64) }
	m := HostJournal{Host: "h", Backups: []Backup{
		{Path: "/etc/a", Existed: true, SHA256: sha("a"), Stored: "/var/lib/kaudit/runs/R/file-0", Written: sha("b")},
		{Path: "/etc/new", Existed: false},
		{Path: "/etc/c", Existed: true, SHA256: sha("c"), Stored: "/var/lib/kaudit/runs/R/file-2"},
	}, Runtime: []RuntimeValue{{Kind: KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}}}
	j := HostJournal{Host: "h", Backups: []Backup{
		{Path: "/etc/a", Existed: true, SHA256: sha("a"), Stored: "/elsewhere/file-9", Changed: ChangedYes, Mode: "0644"},
		{Path: "/etc/new", Existed: true, SHA256: sha("d"), Changed: ChangedYes},
		{Path: "/etc/c", Existed: true, SHA256: sha("c"), Changed: ChangedNo},
		{Path: "/etc/victim", Existed: false, Changed: ChangedMaybe},
	}, Runtime: []RuntimeValue{{Key: "net.core.somaxconn", Before: "128", After: "1", Changed: ChangedYes}}}
	got, refused := j.Reconcile(m)
	if len(got.Backups) != 1 || got.Backups[0] != (Backup{Path: "/etc/a", Existed: true, SHA256: sha("a"), Stored: "/var/lib/kaudit/runs/R/file-0", Written: sha("b"), Changed: ChangedYes, Mode: "0644"}) {
		t.Errorf("backups %+v", got.Backups)
	}
	if len(got.Runtime) != 1 || got.Runtime[0] != (RuntimeValue{Kind: KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096", Changed: ChangedYes}) {
		t.Errorf("runtime %+v", got.Runtime)
	}
	want := []string{
		"file /etc/new: the journal says it was sha256 " + sha("d") + " before the run, the host's manifest says absent: not restored",
		"file /etc/victim: the run's manifest on the host does not hold it (the run never backed it up): not restored",
	}
	if strings.Join(refused, "\n") != strings.Join(want, "\n") {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(refused, "\n"), strings.Join(want, "\n"))
	}
}
