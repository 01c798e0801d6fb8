package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

// The host facts of issue 30 (NUMA, transparent huge pages, clocksource,
// conntrack, the clock): the sysctls and /sys files their rules read,
// gathered whatever the catalog's checks name.
const (
	KeyZoneReclaim    = "vm.zone_reclaim_mode"
	KeyNUMABalancing  = "kernel.numa_balancing"
	KeyConntrackCount = "net.netfilter.nf_conntrack_count"
	KeyConntrackMax   = "net.netfilter.nf_conntrack_max"

	FileTHPEnabled     = "/sys/kernel/mm/transparent_hugepage/enabled"
	FileTHPDefrag      = "/sys/kernel/mm/transparent_hugepage/defrag"
	FileClockCurrent   = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
	FileClockAvailable = "/sys/devices/system/clocksource/clocksource0/available_clocksource"
)

var (
	hostSysctls = []string{KeyZoneReclaim, KeyNUMABalancing, KeyConntrackCount, KeyConntrackMax}
	hostFiles   = []string{FileTHPEnabled, FileTHPDefrag, FileClockCurrent, FileClockAvailable}
)

// file is a /proc or /sys file the host section read, or why not.
func (c *evalCtx) file(path string) (string, string, bool) {
	if v, ok := c.f.Files[path]; ok {
		return v, "", true
	}
	if c.f.Host == nil {
		return "", c.notGathered(facts.SecHost, path), false
	}
	if why := c.f.Host.Unread[path]; why != "" {
		return "", path + " not readable on the host (" + why + ")", false
	}
	return "", path + " not read", false
}

// files is file for two paths: both values, or why the first missing
// one is not there.
func (c *evalCtx) files(a, b string) (string, string, string, bool) {
	va, why, ok := c.file(a)
	if !ok {
		return "", "", why, false
	}
	vb, why, ok := c.file(b)
	return va, vb, why, ok
}

// selected is the bracketed word of a sysfs choice file ("always
// [madvise] never": madvise); "" when none is.
func selected(v string) string {
	for _, w := range strings.Fields(v) {
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			return strings.Trim(w, "[]")
		}
	}
	return ""
}

// sysctlAbsent: the key's /proc/sys entry does not exist on the host (its
// module is not loaded), as opposed to not readable.
func (c *evalCtx) sysctlAbsent(key string) bool {
	return c.f.SysctlUnread[key] == "absent"
}

func evalZoneReclaim(c *evalCtx) Finding {
	if c.f.Host != nil && c.f.Host.NUMANodes < 0 && c.sysctlAbsent(KeyZoneReclaim) {
		return skip("the kernel has no NUMA support (no " + KeyZoneReclaim + ", no /sys/devices/system/node): zone reclaim does not exist on it")
	}
	mode, why, ok := c.sysctlInt(KeyZoneReclaim)
	if !ok {
		return unknown(why)
	}
	if c.f.Host == nil {
		return unknown(c.notGathered(facts.SecHost, "the NUMA node count"))
	}
	if c.f.Host.NUMANodes == 0 {
		return unknown("the NUMA node count was not read (" + cmp.Or(c.f.Host.Unread["numa"], "no numa-nodes line in the host section") + ")")
	}
	bal := "not readable"
	if v, _, ok := c.sysctl(KeyNUMABalancing); ok {
		bal = v
	}
	nodes := c.f.Host.NUMANodes
	fd := Finding{Observed: fmt.Sprintf("%s=%d, %d NUMA nodes, %s=%s", KeyZoneReclaim, mode, max(nodes, 1), KeyNUMABalancing, bal), Expected: KeyZoneReclaim + "=0 on a host with more than one NUMA node"}
	switch {
	case nodes <= 1:
		fd.Status, fd.Reason = Pass, "one NUMA node: zone reclaim never applies"
	case mode != 0:
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%s=%d on %d NUMA nodes: the kernel reclaims page cache on the local node before using another's, and the log's page cache is the broker's working set", KeyZoneReclaim, mode, nodes)
		fd.Fix = &Fix{Summary: "set " + KeyZoneReclaim + "=0 and persist", Sysctl: map[string]string{KeyZoneReclaim: "0"}, Bounds: map[string]Bound{KeyZoneReclaim: {Dir: Exactly}}}
	default:
		fd.Status, fd.Reason = Pass, fmt.Sprintf("zone reclaim is off on %d NUMA nodes (kernel.numa_balancing=%s, reported)", nodes, bal)
	}
	return fd
}

func evalTHP(c *evalCtx) Finding {
	en, df, why, ok := c.files(FileTHPEnabled, FileTHPDefrag)
	if !ok && c.f.Host != nil && c.f.Host.Unread[FileTHPEnabled] == "absent" {
		if _, sysRead := c.f.Files[FileClockCurrent]; sysRead {
			return skip("the kernel has no transparent huge pages (" + FileTHPEnabled + " is absent where the rest of /sys is read)")
		}
	}
	if !ok {
		return unknown(why)
	}
	e, d := selected(en), selected(df)
	if e == "" || d == "" {
		return unknown(fmt.Sprintf("no selected mode in %q / %q", en, df))
	}
	fd := Finding{Observed: "transparent huge pages " + e + ", defrag " + d, Expected: "not always with defrag always"}
	if e == "always" && d == "always" {
		fd.Status = Warn
		fd.Reason = "transparent huge pages always, with defrag always: a page fault of the JVM may stall in direct compaction; vendors differ on THP (madvise or never is the common advice for a JVM), so this is a warning, not a failure"
		fd.Fix = &Fix{Summary: "set transparent huge page defrag to madvise (or defer)", Manual: "echo madvise > " + FileTHPDefrag + ", and persist it (transparent_hugepage= on the kernel command line, or a systemd unit)", WhenWarn: true}
		return fd
	}
	fd.Status, fd.Reason = Pass, "transparent huge pages "+e+", defrag "+d+" (reported)"
	return fd
}

func evalClocksource(c *evalCtx) Finding {
	cur, avail, why, ok := c.files(FileClockCurrent, FileClockAvailable)
	if !ok {
		return unknown(why)
	}
	fd := Finding{Observed: "clocksource " + cur + " (available: " + avail + ")", Expected: "tsc when the kernel offers it"}
	if cur != "tsc" && slices.Contains(strings.Fields(avail), "tsc") {
		fd.Status = Fail
		fd.Reason = "the clocksource is " + cur + " although tsc is available: every time call of the JVM (request timing, timeouts) goes through a slower clock"
		fd.Fix = &Fix{Summary: "switch the clocksource to tsc", Manual: "echo tsc > " + FileClockCurrent + " now, and clocksource=tsc on the kernel command line to keep it; first check dmesg: the kernel may have marked the tsc unstable on this machine"}
		return fd
	}
	fd.Status, fd.Reason = Pass, "clocksource "+cur
	return fd
}

// conntrackFullPct is the share of nf_conntrack_max past which the table
// is called nearly full.
const conntrackFullPct = 80

func evalConntrack(c *evalCtx) Finding {
	if c.f.Sysctl != nil && c.sysctlAbsent(KeyConntrackMax) {
		return skip("nf_conntrack is not loaded: no connection tracking table")
	}
	n, why, ok := c.sysctlInt(KeyConntrackCount)
	if !ok {
		return unknown(why)
	}
	m, why, ok := c.sysctlInt(KeyConntrackMax)
	if !ok {
		return unknown(why)
	}
	fd := Finding{Observed: fmt.Sprintf("%s=%d, %s=%d", KeyConntrackCount, n, KeyConntrackMax, m), Expected: fmt.Sprintf("count at most %d%% of max", conntrackFullPct)}
	if m > 0 && n*100 > m*conntrackFullPct {
		want := strconv.Itoa(max(2*n, m*2))
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("the conntrack table is %d%% full: when it fills the kernel drops new connections silently (\"nf_conntrack: table full, dropping packet\"), exactly during a reconnect storm", n*100/m)
		fd.Fix = &Fix{Summary: "raise " + KeyConntrackMax + " to " + want + " and persist", Sysctl: map[string]string{KeyConntrackMax: want}, Bounds: map[string]Bound{KeyConntrackMax: {Dir: AtLeast}}}
		return fd
	}
	fd.Status, fd.Reason = Pass, fmt.Sprintf("the conntrack table is %d%% full", n*100/max(m, 1))
	return fd
}

// clockOffsetMax is the offset from kaudit's clock past which a host's
// clock is called off, beyond the measurement's own bound.
const clockOffsetMax = time.Second

func evalClockOffset(c *evalCtx) Finding {
	if c.f.Host == nil {
		return unknown(c.notGathered(facts.SecHost, "the host's clock"))
	}
	ck := c.f.Host.Clock
	if ck == nil || !ck.Measured {
		if why := c.f.Host.Unread["clock"]; why != "" {
			return unknown("the host's clock not read: " + why)
		}
		return unknown("the host's clock not read in the gather session")
	}
	d, b := time.Duration(ck.OffsetSeconds)*time.Second, time.Duration(ck.BoundSeconds)*time.Second
	// The measured numbers are shown only when they fail: a passing
	// report stays the same from one run to the next.
	fd := Finding{Observed: "host clock within " + clockOffsetMax.String() + " of kaudit's", Expected: "within " + clockOffsetMax.String() + " of kaudit's clock"}
	if abs(d) > clockOffsetMax+b {
		fd.Observed = fmt.Sprintf("host clock %s from kaudit's (± %s: half the session's round trip, rounded up)", signed(d), b)
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("the host's clock is %s off kaudit's (more than %s beyond the measurement's bound): Kafka's retention and segment rolling use record timestamps the broker assigns (KAFKA-3163), future timestamps block deletion (KAFKA-7910); check that kaudit's own clock is synchronised, then the host's time service", signed(d), clockOffsetMax)
		fd.Fix = &Fix{Summary: "synchronise the host's clock", Manual: "run a time service (chronyd, ntpd or systemd-timesyncd) against the same servers as the other brokers; chronyc tracking or timedatectl show the state"}
		return fd
	}
	fd.Status, fd.Reason = Pass, "the host's clock agrees with kaudit's within the measurement's bound"
	return fd
}

func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
