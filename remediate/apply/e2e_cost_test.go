//go:build e2e

package apply_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestApplyScriptCost measures the apply and the restore script on a real
// host (ext4 under the fleet's overlays): each run sets a running value,
// creates the managed sysctl file and edits a properties file, then the
// restore puts everything back. The scripts run inside the host's
// namespaces (nsenter, no SSH), so the numbers are the shell's own cost.
func TestApplyScriptCost(t *testing.T) {
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "c1", Sysctls: map[string]string{"net.core.somaxconn": "128"}}})
	h := f.Host("c1")
	const props = "/etc/kaudit-cost.properties"
	h.Exec(t, "sh", "-c", "printf 'a=1\\nsocket.listen.backlog.size=50\\n' > "+props)
	run := func(script []byte, marker string) (time.Duration, remote.Results) {
		t0 := time.Now()
		out, err := h.ExecErr("sh", "-c", string(script))
		d := time.Since(t0)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return d, remote.ParseResults([]byte(out), marker)
	}
	// The run's lease, as its read step would take it (the apply script
	// refuses to change a host whose lease is not its run's).
	lease := func(id string) {
		h.Exec(t, "sh", "-c", "mkdir -p "+apply.KaudirDir+" && printf '%s\tunknown\t0\t0\t1\t9999999999\n' "+id+" > "+apply.KaudirDir+"/lease")
	}
	var applies, restores []time.Duration
	const n = 10
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("20261201T000000Z-%08x", i)
		old := strings.Fields(h.Exec(t, "sha256sum", props))[0]
		p := apply.ApplyParams{Marker: apply.NewMarker(), RunID: id,
			Runtime: []apply.RuntimeWrite{{Key: "net.core.somaxconn", Before: "128", To: "4096"}},
			Files: []apply.FileWrite{
				{Path: props, Existed: true, OldSHA: old, Content: []byte("a=1\nsocket.listen.backlog.size=4096\n")},
				{Path: "/etc/sysctl.d/99-kaudit.conf", Content: []byte("net.core.somaxconn = 4096\n"), Mode: "0644"},
			}}
		script, err := apply.ApplyScript(p)
		if err != nil {
			t.Fatal(err)
		}
		lease(id)
		d, rs := run(script, p.Marker)
		if f := rs.FirstFailure(); f != nil || rs.Find("done") == nil {
			t.Fatalf("apply: %+v", rs)
		}
		applies = append(applies, d)
		rp := apply.RollbackParams{Marker: apply.NewMarker(), RunID: id, Force: true,
			Backups: []remediate.Backup{{Path: props, Existed: true, SHA256: old, Stored: apply.RunDir(id) + "/file-0"}, {Path: "/etc/sysctl.d/99-kaudit.conf"}},
			Runtime: []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}}}
		script, err = apply.RollbackScript(rp)
		if err != nil {
			t.Fatal(err)
		}
		d, rs = run(script, rp.Marker)
		if f := rs.FirstFailure(); f != nil || rs.Find("done").Text() != "ok" {
			t.Fatalf("rollback: %+v", rs)
		}
		restores = append(restores, d)
	}
	// One more run of each under strace, when the host has it: how many
	// programs each script runs and how many fsyncs it asks for.
	if _, err := h.ExecErr("sh", "-c", "command -v strace"); err == nil {
		id := "20261201T000000Z-ffffffff"
		old := strings.Fields(h.Exec(t, "sha256sum", props))[0]
		p := apply.ApplyParams{Marker: apply.NewMarker(), RunID: id,
			Runtime: []apply.RuntimeWrite{{Key: "net.core.somaxconn", Before: "128", To: "4096"}},
			Files: []apply.FileWrite{
				{Path: props, Existed: true, OldSHA: old, Content: []byte("a=1\nsocket.listen.backlog.size=4096\n")},
				{Path: "/etc/sysctl.d/99-kaudit.conf", Content: []byte("net.core.somaxconn = 4096\n"), Mode: "0644"},
			}}
		script, _ := apply.ApplyScript(p)
		lease(id)
		count := func(what string, script []byte) {
			out, err := h.ExecErr("sh", "-c", `strace -f -qq -c -e trace=execve,fsync,fdatasync,sync -o /tmp/kaudit-strace sh -c "$1" >/dev/null; cat /tmp/kaudit-strace`, "sh", string(script))
			if err != nil {
				t.Fatalf("strace: %v", err)
			}
			t.Logf("%s under strace:\n%s", what, out)
		}
		count("apply script", script)
		rp := apply.RollbackParams{Marker: apply.NewMarker(), RunID: id, Force: true,
			Backups: []remediate.Backup{{Path: props, Existed: true, SHA256: old, Stored: apply.RunDir(id) + "/file-0"}, {Path: "/etc/sysctl.d/99-kaudit.conf"}},
			Runtime: []remediate.RuntimeValue{{Kind: remediate.KindSysctl, Key: "net.core.somaxconn", Before: "128", After: "4096"}}}
		script, _ = apply.RollbackScript(rp)
		count("restore script", script)
	}
	stats := func(ds []time.Duration) string {
		slices.Sort(ds)
		return fmt.Sprintf("min %v, median %v, max %v", ds[0].Round(time.Millisecond/10), ds[len(ds)/2].Round(time.Millisecond/10), ds[len(ds)-1].Round(time.Millisecond/10))
	}
	t.Logf("apply script (%d runs): %s", n, stats(applies))
	t.Logf("restore script (%d runs): %s", n, stats(restores))
}
