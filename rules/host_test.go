package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestHostRules(t *testing.T) {
	p := DefaultProfile()
	for _, c := range []struct {
		name, rule string
		edit       func(f *facts.Facts)
		status     Status
		reason     string
		fixSysctl  map[string]string
	}{
		{"zone reclaim on two nodes", "numa-zone-reclaim", func(f *facts.Facts) { f.Sysctl[KeyZoneReclaim] = "1" }, Fail, "vm.zone_reclaim_mode=1 on 2 NUMA nodes", map[string]string{KeyZoneReclaim: "0"}},
		{"zone reclaim on one node", "numa-zone-reclaim", func(f *facts.Facts) { f.Sysctl[KeyZoneReclaim] = "1"; f.Host.NUMANodes = 1 }, Pass, "one NUMA node", nil},
		{"zone reclaim, no NUMA in the kernel", "numa-zone-reclaim", func(f *facts.Facts) { f.Sysctl[KeyZoneReclaim] = "1"; f.Host.NUMANodes = -1 }, Pass, "one NUMA node", nil},
		{"a kernel without THP (the VM lab's)", "transparent-hugepages", func(f *facts.Facts) {
			delete(f.Files, FileTHPEnabled)
			f.Host.Unread = map[string]string{FileTHPEnabled: "absent"}
		}, Skip, "no transparent huge pages", nil},
		{"THP absent, /sys not read", "transparent-hugepages", func(f *facts.Facts) {
			delete(f.Files, FileTHPEnabled)
			delete(f.Files, FileClockCurrent)
			f.Host.Unread = map[string]string{FileTHPEnabled: "absent"}
		}, Unknown, "absent", nil},
		{"a kernel without NUMA (the VM lab's)", "numa-zone-reclaim", func(f *facts.Facts) {
			delete(f.Sysctl, KeyZoneReclaim)
			f.SysctlUnread, f.Host.NUMANodes = map[string]string{KeyZoneReclaim: "absent"}, -1
		}, Skip, "no NUMA support", nil},
		{"zone reclaim absent, nodes present", "numa-zone-reclaim", func(f *facts.Facts) {
			delete(f.Sysctl, KeyZoneReclaim)
			f.SysctlUnread = map[string]string{KeyZoneReclaim: "absent"}
		}, Unknown, "not readable", nil},
		{"node count not read", "numa-zone-reclaim", func(f *facts.Facts) { f.Host.NUMANodes = 0 }, Unknown, "NUMA node count was not read", nil},
		{"zone reclaim unreadable", "numa-zone-reclaim", func(f *facts.Facts) { delete(f.Sysctl, KeyZoneReclaim) }, Unknown, "not readable", nil},
		{"zone reclaim, no host section", "numa-zone-reclaim", func(f *facts.Facts) { f.Host = nil }, Unknown, "NUMA node count not gathered", nil},
		{"thp always+always", "transparent-hugepages", func(f *facts.Facts) {
			f.Files[FileTHPEnabled], f.Files[FileTHPDefrag] = "[always] madvise never", "[always] defer defer+madvise madvise never"
		}, Warn, "vendors differ", nil},
		{"thp always, defrag madvise", "transparent-hugepages", func(f *facts.Facts) { f.Files[FileTHPEnabled] = "[always] madvise never" }, Pass, "always, defrag madvise", nil},
		{"thp unreadable", "transparent-hugepages", func(f *facts.Facts) {
			delete(f.Files, FileTHPDefrag)
			f.Host.Unread = map[string]string{FileTHPDefrag: "denied"}
		}, Unknown, "not readable on the host (denied)", nil},
		{"clocksource hpet with tsc", "clocksource", func(f *facts.Facts) { f.Files[FileClockCurrent] = "hpet" }, Fail, "although tsc is available", nil},
		{"clocksource xen without tsc", "clocksource", func(f *facts.Facts) { f.Files[FileClockCurrent], f.Files[FileClockAvailable] = "xen", "xen" }, Pass, "clocksource xen", nil},
		{"clocksource absent", "clocksource", func(f *facts.Facts) {
			delete(f.Files, FileClockCurrent)
			f.Host.Unread = map[string]string{FileClockCurrent: "absent"}
		}, Unknown, "absent", nil},
		{"conntrack 90% full", "conntrack-table", func(f *facts.Facts) { f.Sysctl[KeyConntrackCount], f.Sysctl[KeyConntrackMax] = "58983", "65536" }, Fail, "90% full", map[string]string{KeyConntrackMax: "131072"}},
		{"conntrack 80% exactly", "conntrack-table", func(f *facts.Facts) { f.Sysctl[KeyConntrackCount], f.Sysctl[KeyConntrackMax] = "800", "1000" }, Pass, "80% full", nil},
		{"conntrack not loaded", "conntrack-table", func(f *facts.Facts) {
			delete(f.Sysctl, KeyConntrackCount)
			delete(f.Sysctl, KeyConntrackMax)
			f.SysctlUnread = map[string]string{KeyConntrackCount: "absent", KeyConntrackMax: "absent"}
			f.Sections = map[string]facts.SectionStatus{facts.SecSysctl: {State: facts.SectionPartial, Message: "not readable: net.netfilter.nf_conntrack_count (absent), net.netfilter.nf_conntrack_max (absent)"}}
		}, Skip, "not loaded", nil},
		{"conntrack denied", "conntrack-table", func(f *facts.Facts) {
			delete(f.Sysctl, KeyConntrackCount)
			f.SysctlUnread = map[string]string{KeyConntrackCount: "denied"}
			f.Sections = map[string]facts.SectionStatus{facts.SecSysctl: {State: facts.SectionPartial, Message: "not readable: net.netfilter.nf_conntrack_count (denied)"}}
		}, Unknown, "not readable", nil},
		{"clock 3 s ahead", "clock-offset", func(f *facts.Facts) { f.Host.Clock.OffsetSeconds = 3 }, Fail, "+3s off", nil},
		{"clock 3 s behind", "clock-offset", func(f *facts.Facts) { f.Host.Clock.OffsetSeconds = -3 }, Fail, "-3s off", nil},
		{"clock within the bound", "clock-offset", func(f *facts.Facts) { f.Host.Clock.OffsetSeconds = 2 }, Pass, "agrees", nil},
		{"clock 3 s off, round trip of 4 s", "clock-offset", func(f *facts.Facts) { f.Host.Clock.OffsetSeconds, f.Host.Clock.BoundSeconds = 3, 2 }, Pass, "agrees", nil},
		{"clock not read", "clock-offset", func(f *facts.Facts) {
			f.Host.Clock = nil
			f.Host.Unread = map[string]string{"clock": `date printed ""`}
		}, Unknown, "date printed", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := compliantHost()
			if fd := find(t, Evaluate(f, p), c.rule); fd.Status != Pass {
				t.Fatalf("compliant host: %s %q", fd.Status, fd.Reason)
			}
			c.edit(f)
			fd := find(t, Evaluate(f, p), c.rule)
			if fd.Status != c.status || !strings.Contains(fd.Reason, c.reason) {
				t.Fatalf("%s %q, want %s containing %q", fd.Status, fd.Reason, c.status, c.reason)
			}
			if c.fixSysctl != nil && (fd.Fix == nil || len(fd.Fix.Sysctl) != len(c.fixSysctl)) {
				t.Fatalf("fix %+v, want %v", fd.Fix, c.fixSysctl)
			}
			for k, v := range c.fixSysctl {
				if fd.Fix.Sysctl[k] != v {
					t.Errorf("fix %s=%s, want %s", k, fd.Fix.Sysctl[k], v)
				}
			}
		})
	}
}
