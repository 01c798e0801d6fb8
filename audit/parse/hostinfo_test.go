package parse

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestHost(t *testing.T) {
	for _, c := range []struct {
		file string
		want HostSection
	}{
		{"host/this-machine.txt", HostSection{
			Files: map[string]string{
				"/sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc kvm-clock",
				"/sys/devices/system/clocksource/clocksource0/current_clocksource":   "tsc",
				"/sys/kernel/mm/transparent_hugepage/defrag":                         "always defer defer+madvise [madvise] never",
				"/sys/kernel/mm/transparent_hugepage/enabled":                        "always [madvise] never",
			},
			Info:   facts.HostInfo{NUMANodes: 1, Clock: &facts.Clock{HostUnixNano: 1796479479454921514}},
			MTU:    map[string]int{"eth0": 1400},
			Unread: map[string]string{"/sys/nonexistent/x": "absent"},
		}},
		{"host/denied-absent-no-nanoseconds-reconstructed.txt", HostSection{
			Files: map[string]string{},
			Info:  facts.HostInfo{NUMANodes: -1, Clock: &facts.Clock{HostUnixNano: 1796479479000000000}},
			MTU:   map[string]int{},
			Unread: map[string]string{
				"/sys/kernel/mm/transparent_hugepage/enabled":                      "absent",
				"/sys/devices/system/clocksource/clocksource0/current_clocksource": "denied",
				"/proc/sys/kernel/random/uuid":                                     "unreadable",
				"mtu eth0":                                                         "absent /sys/class/net/eth0/mtu",
			},
		}},
	} {
		if got := Host(readTestdata(t, c.file)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
	}
	if h := Host("clock garbage\nnuma-nodes x\n"); h.Info.Clock != nil || h.Unread["clock"] == "" || h.Unread["numa"] == "" || h.Info.NUMANodes != 0 {
		t.Errorf("garbage read as values: %+v", h)
	}
	// No numa-nodes line, or "0" (a NUMA kernel has node0 at least): not
	// read (0), never a kernel without NUMA (-1).
	for _, body := range []string{"", "numa-nodes 0\n"} {
		if h := Host(body); h.Info.NUMANodes != 0 {
			t.Errorf("%q: NUMANodes %d, want 0 (not read)", body, h.Info.NUMANodes)
		}
	}
}
