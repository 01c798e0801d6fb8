package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
)

// An edited journal restores only what the run's own manifest on the
// host holds, with the manifest's before values: a file the run never
// wrote is not removed, a running value the run never set is not set, a
// before value the journal changed is not written; each is refused,
// named, and the host fails. The run's own items are restored.
func TestRollbackByManifest(t *testing.T) {
	const run = "20260101T000000Z-0000e0e0"
	s := newSandbox(t, "h1")
	s.write(t, "h1", "/etc/victim.conf", "keep me\n")
	s.write(t, "h1", "/proc/sys/net/ipv4/ip_forward", "0\n")
	before := s.read("h1", sbProps)
	j, err := Apply(context.Background(), sbHosts("h1"), Options{Runner: s, RunID: run})
	if err != nil || j.Host("h1").Status != remediate.StatusVerified {
		t.Fatalf("apply: %v %+v", err, j.Host("h1"))
	}
	applied := s.read("h1", "/proc/sys/net/core/somaxconn")
	hj := j.Host("h1")
	hj.Backups = append(hj.Backups, remediate.Backup{Path: "/etc/victim.conf", Existed: false, Changed: remediate.ChangedYes})
	hj.Runtime = append(hj.Runtime, remediate.RuntimeValue{Kind: remediate.KindSysctl, Key: "net.ipv4.ip_forward", Before: "1", After: "0", Changed: remediate.ChangedYes})
	for i := range hj.Runtime {
		if hj.Runtime[i].Key == "net.core.somaxconn" {
			hj.Runtime[i].Before = "1"
		}
	}
	res, err := Rollback(context.Background(), []inventory.Host{sbHosts("h1")[0].Inv}, j, Options{Runner: s})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	want := []string{
		"file /etc/victim.conf: the run's manifest on the host does not hold it (the run never backed it up): not restored",
		`sysctl net.core.somaxconn: the journal says "1" before the run, the host's manifest says "128": not restored`,
		"sysctl net.ipv4.ip_forward: the run's manifest on the host does not hold it (the run never set it): not restored",
	}
	if strings.Join(res[0].Refused, "\n") != strings.Join(want, "\n") {
		t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(res[0].Refused, "\n"), strings.Join(want, "\n"))
	}
	for p, v := range map[string]string{"/etc/victim.conf": "keep me\n", "/proc/sys/net/ipv4/ip_forward": "0\n", "/proc/sys/net/core/somaxconn": applied, sbProps: before} {
		if got := s.read("h1", p); got != v {
			t.Errorf("%s after the rollback: %q, want %q", p, got, v)
		}
	}
	if st := j.Host("h1").Status; st != remediate.StatusFailed || !strings.Contains(j.Host("h1").Error, "/etc/victim.conf") {
		t.Errorf("journal: %s %q, want failed naming the refused items", st, j.Host("h1").Error)
	}
}
