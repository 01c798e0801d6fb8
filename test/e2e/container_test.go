//go:build e2e

package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestFixInAContainer: every test host is a container of this machine (it
// shares this machine's kernel, and says so in /run/systemd/container as
// a container manager does). vm.swappiness fails there (this machine's
// value), but fix never plans it: writing it would change this machine's
// kernel, and the scan's finding says to set it on the node. The
// per-namespace somaxconn beside it is applied.
func TestFixInAContainer(t *testing.T) {
	requireEnv(t)
	before, err := os.ReadFile("/proc/sys/vm/swappiness")
	must(t, err)
	if strings.TrimSpace(string(before)) == "0" || strings.TrimSpace(string(before)) == "1" {
		t.Skipf("this machine's vm.swappiness is %s: vm-swappiness passes, nothing to refuse", strings.TrimSpace(string(before)))
	}
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "ctr", Sysctls: base("net.core.somaxconn", "128")}})
	h := f.Hosts[0]
	inv := writeInventory(t, f, entry(h))

	r := scan(t, runOpts{}, inv)
	fd := finding(r.host(t, "ctr"), "vm-swappiness")
	if fd == nil || fd.Status != rules.Fail {
		t.Fatalf("vm-swappiness on ctr: %+v", fd)
	}
	if fd.Fix == nil || !strings.Contains(fd.Fix.Summary, "on the node that runs this container (kft (/run/systemd/container)): vm.swappiness is the node kernel's") {
		t.Errorf("the finding's fix does not say it is the node's: %+v", fd.Fix)
	}
	fix := runKaudit(t, runOpts{}, "fix", inv, "--rules", "vm-swappiness"+",somaxconn", "--apply", "--yes", "--journal-dir", t.TempDir(), "--timeout", "30s")
	t.Logf("fix --apply: exit %d\n%s", fix.Code, fix.Stdout)
	want := "vm.swappiness is kernel-wide and this host is a container (kft (/run/systemd/container)): writing it here would change the node's kernel"
	plan := strings.Join(strings.Fields(fix.Stdout), " ") // the plan wraps at the terminal's width
	if !strings.Contains(plan, want) || !strings.Contains(plan, "instead: set it on the node that runs this container (vm.swappiness = 1 in its /etc/sysctl.d)") {
		t.Errorf("fix does not refuse vm.swappiness with %q\nstdout:\n%s\nstderr:\n%s", want, fix.Stdout, fix.Stderr)
	}
	after, err := os.ReadFile("/proc/sys/vm/swappiness")
	must(t, err)
	if string(after) != string(before) {
		t.Errorf("this machine's vm.swappiness went from %s to %s", strings.TrimSpace(string(before)), strings.TrimSpace(string(after)))
	}
	if got := strings.TrimSpace(h.Exec(t, "cat", "/proc/sys/net/core/somaxconn")); got != "4096" {
		t.Errorf("somaxconn on ctr after fix --apply: %s, want 4096 (exit %d)", got, fix.Code)
	}
}
