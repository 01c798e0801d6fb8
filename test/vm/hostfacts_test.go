//go:build vm

package vm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
)

// TestHostFactsOnRealKernel: issue 30's host rules judged on a real
// kernel, each against what the guest itself says, then again after the
// guest is changed under them (another clocksource, a clock 30 s ahead).
// The lab's kernel is a tinyconfig: no NUMA, no transparent huge pages,
// no netfilter; those rules must say so and never pass.
func TestHostFactsOnRealKernel(t *testing.T) {
	g := Boot(t, Options{Name: "hostfacts", Flavour: Stock})
	installBroker(t, g)
	inv := WriteInventory(t, g)

	truth := func(cmd string) string { return strings.TrimSpace(slow(t, g, cmd+" 2>/dev/null; true")) }
	const cs = "/sys/devices/system/clocksource/clocksource0/"
	cur, avail := truth("cat "+cs+"current_clocksource"), truth("cat "+cs+"available_clocksource")
	thp := truth("cat " + rules.FileTHPEnabled)
	zr, nodes := truth("cat /proc/sys/vm/zone_reclaim_mode"), truth("ls -d /sys/devices/system/node")
	ct := truth("cat /proc/sys/net/netfilter/nf_conntrack_max")
	t.Logf("guest: clocksource %q of %q; THP %q; zone_reclaim_mode %q, node dir %q; nf_conntrack_max %q", cur, avail, thp, zr, nodes, ct)

	rep, r := scanJSON(t, "scan", inv)
	if r.code > 1 {
		t.Fatalf("scan exit %d\n%s", r.code, r.stderr)
	}
	f := func(rule string) *rules.Finding {
		fd := findingOf(t, rep, g.Name, rule)
		t.Logf("%s: %s %q (%s)", rule, fd.Status, fd.Observed, fd.Reason)
		return fd
	}
	want := func(rule string, fd *rules.Finding, st rules.Status, observed string) {
		t.Helper()
		if fd.Status != st || (observed != "" && fd.Observed != observed) {
			t.Errorf("%s: %s %q, want %s %q", rule, fd.Status, fd.Observed, st, observed)
		}
	}

	tscIdle := cur != "tsc" && slices.Contains(strings.Fields(avail), "tsc")
	want("clocksource", f("clocksource"), map[bool]rules.Status{true: rules.Fail, false: rules.Pass}[tscIdle],
		fmt.Sprintf("clocksource %s (available: %s)", cur, avail))
	want("clock-offset", f("clock-offset"), rules.Pass, "")
	for _, absent := range []struct{ rule, truth string }{
		{"transparent-hugepages", thp}, {"numa-zone-reclaim", zr}, {"conntrack-table", ct},
	} {
		if fd := f(absent.rule); absent.truth == "" && fd.Status != rules.Skip {
			t.Errorf("%s: %s on a kernel without it: want skip (it does not exist there), never a verdict", absent.rule, fd.Status)
		}
	}

	// Issue 30's later rules, against what the guest says: no netfilter,
	// a PLAINTEXT listener, no memory limit on kafka.service, the log dir
	// on the virtio disk.
	if fd := f("conntrack-drops"); ct == "" && fd.Status != rules.Skip {
		t.Errorf("conntrack-drops: %s without nf_conntrack, want skip", fd.Status)
	}
	if fd := f("reverse-dns"); fd.Status != rules.Skip {
		t.Errorf("reverse-dns: %s on a PLAINTEXT broker, want skip", fd.Status)
	}
	synced := truth("timedatectl show -p NTPSynchronized --value")
	if fd := f("time-sync"); fd.Status == rules.Pass && synced != "yes" {
		t.Errorf("time-sync: pass while the guest says NTPSynchronized=%q", synced)
	}
	want("broker-cgroup-memory", f("broker-cgroup-memory"), rules.Pass, "")
	dev := truth("basename $(readlink -f /sys/dev/block/$(mountpoint -d /var/lib/kafka/data 2>/dev/null || stat -c '%t:%T' /dev/vda))")
	sched, rot := truth("cat /sys/block/vda/queue/scheduler"), truth("cat /sys/block/vda/queue/rotational")
	t.Logf("guest: log dir device %q, vda scheduler %q rotational %q", dev, sched, rot)
	wantDev := rules.Pass
	if rot == "1" && strings.Contains(sched, "[none]") {
		wantDev = rules.Warn
	}
	if fd := f("log-dir-devices"); fd.Status != wantDev || !strings.Contains(fd.Observed, "vda") {
		t.Errorf("log-dir-devices: %s %q, want %s naming vda", fd.Status, fd.Observed, wantDev)
	}

	// Change the guest under the rules: a clocksource other than tsc where
	// tsc is offered, and the clock 30 s ahead of kaudit's.
	other := ""
	for _, c := range strings.Fields(avail) {
		if c != "tsc" && c != cur {
			other = c
		}
	}
	slow(t, g, `date -s "@$(( $(date +%s) + 30 ))" >/dev/null`)
	// A memory limit under the heap (-Xmx1G) plus the page-cache floor.
	slow(t, g, "systemctl set-property --runtime kafka.service MemoryMax=1500M")
	if other != "" {
		slow(t, g, "echo "+other+" > "+cs+"current_clocksource")
	}
	rep, _ = scanJSON(t, "scan", inv)
	if fd := f("clock-offset"); fd.Status != rules.Fail || !strings.Contains(fd.Observed, "host clock +3") {
		t.Errorf("clock-offset after the guest's clock went 30 s ahead: %s %q", fd.Status, fd.Observed)
	}
	if fd := f("broker-cgroup-memory"); fd.Status != rules.Fail || !strings.Contains(fd.Observed, "kafka.service") {
		t.Errorf("broker-cgroup-memory with MemoryMax=1500M on a 1G heap: %s %q, want fail naming kafka.service", fd.Status, fd.Observed)
	}
	if other != "" && slices.Contains(strings.Fields(avail), "tsc") {
		want("clocksource", f("clocksource"), rules.Fail, fmt.Sprintf("clocksource %s (available: %s)", other, avail))
	}
}
