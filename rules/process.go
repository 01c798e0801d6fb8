package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// The broker process's own facts (/proc/PID: open files, maps, swap, JVM).

// headroomPct is how much of a limit the broker may use before it is a
// finding: past it, a burst of connections or segments reaches the limit.
const headroomPct = 80

// process is the broker's process facts, or the finding to return when
// there is no broker or they were not gathered.
func (c *evalCtx) process() (*facts.BrokerProcess, *Finding) {
	if c.f.Kafka == nil {
		fd := c.noKafkaFinding()
		return nil, &fd
	}
	if c.f.Kafka.Process == nil {
		fd := unknown(c.notGathered(facts.SecProcess, fmt.Sprintf("the broker process (pid %d)", c.f.Kafka.PID)))
		return nil, &fd
	}
	return c.f.Kafka.Process, nil
}

// unread says why fact key of p could not be read.
func unread(p *facts.BrokerProcess, key, what string) string {
	why := p.Unread[key]
	switch {
	case strings.HasPrefix(why, "denied "):
		return what + " not readable: " + why + " (run with become, or as the broker's user)"
	case why != "":
		return what + " not readable: " + why
	}
	return what + " not gathered"
}

func limitText(n int64) string {
	if n == facts.Unlimited {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// over reports whether used is past headroomPct of limit (unlimited: never).
func over(used, limit int64) bool {
	return limit != facts.Unlimited && used*100 > limit*headroomPct
}

func evalBrokerOpenFiles(c *evalCtx) Finding {
	p, stop := c.process()
	if stop != nil {
		return *stop
	}
	if p.NoFile == nil {
		return unknown(unread(p, "limits", "the broker's open-files limit (/proc/PID/limits)"))
	}
	soft, want := p.NoFile.Soft, int64(c.p.NoFile)
	fd := Finding{Observed: fmt.Sprintf("Max open files soft %s, hard %s", limitText(soft), limitText(p.NoFile.Hard)),
		Expected: fmt.Sprintf("soft ≥ %d, and under %d%% of it in use", want, headroomPct)}
	if p.FDs >= 0 {
		fd.Observed += fmt.Sprintf("; %d descriptors open", p.FDs)
	}
	target := want
	if p.FDs >= 0 {
		target = max(target, int64(p.FDs)*2)
	}
	fix := &Fix{Summary: fmt.Sprintf("raise the broker service's open-files limit to %d (LimitNOFILE) and restart the broker", target),
		NoFile: target, Restart: true,
		Manual: fmt.Sprintf("set LimitNOFILE=%d for the broker's systemd service (a drop-in: systemctl edit <service>, [Service] LimitNOFILE=%d; or limits.conf nofile for its user when it is not a service), then restart the broker, one at a time", target, target)}
	switch {
	case soft != facts.Unlimited && soft < want:
		fd.Status, fd.Fix = Fail, fix
		fd.Reason = fmt.Sprintf("the broker runs with a soft open-files limit of %d, below %d: every segment file and every connection holds a descriptor, and at the limit the broker fails with \"Too many open files\"", soft, want)
		if p.NoFile.Hard == facts.Unlimited || p.NoFile.Hard >= want {
			fd.Reason += fmt.Sprintf(" (the hard limit %s would allow it: the process runs with the soft one)", limitText(p.NoFile.Hard))
		}
	case p.FDs < 0:
		fd.Status = Unknown
		fd.Reason = fmt.Sprintf("the soft limit %s is high enough, but the headroom is not known: %s", limitText(soft), unread(p, "fds", "descriptors in use (/proc/PID/fd)"))
	case over(int64(p.FDs), soft):
		fd.Status, fd.Fix = Fail, fix
		fd.Reason = fmt.Sprintf("%d of %d descriptors in use (over %d%%): a burst of connections or new segments reaches the limit", p.FDs, soft, headroomPct)
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("soft limit %s, %d descriptors in use", limitText(soft), p.FDs)
	}
	return fd
}

// segments sums the log directories' segment counts; ok is false when
// any directory's count (or the directories) is unknown.
func (c *evalCtx) segments() (n int, why string, ok bool) {
	dirs := c.f.Kafka.LogDirs
	if dirs == nil {
		return 0, c.notGathered(facts.SecLogDirs, "log directories"), false
	}
	for _, d := range dirs {
		if d.Segments < 0 {
			return 0, "segments of " + d.Path + " not counted", false
		}
		n += d.Segments
	}
	return n, "", true
}

func evalBrokerMapCount(c *evalCtx) Finding {
	p, stop := c.process()
	if stop != nil {
		return *stop
	}
	limit, why, ok := c.sysctlInt(KeyMaxMapCount)
	if !ok {
		return unknown(why)
	}
	segs, segWhy, segOK := c.segments()
	var basis []string
	demand := -1
	if p.Maps >= 0 {
		demand = p.Maps
		basis = append(basis, fmt.Sprintf("%d maps in use", p.Maps))
	} else {
		segWhy = strings.TrimPrefix(segWhy+"; ", "; ") + unread(p, "maps", "maps in use (/proc/PID/maps)")
	}
	if segOK {
		demand = max(demand, 2*segs)
		basis = append(basis, fmt.Sprintf("%d segments × 2 index maps = %d", segs, 2*segs))
	}
	if demand < 0 {
		return unknown("neither the broker's maps nor its segments could be counted: " + segWhy)
	}
	fd := Finding{Observed: fmt.Sprintf("%s = %d; %s", KeyMaxMapCount, limit, strings.Join(basis, ", ")),
		Expected: fmt.Sprintf("≥ %d, and the broker's maps under %d%% of it", c.p.MaxMapCount, headroomPct)}
	note := ""
	if !segOK || p.Maps < 0 {
		note = " (judged on " + strings.Join(basis, " and ") + " alone: " + segWhy + ")"
	}
	target := max(c.p.MaxMapCount, 2*demand)
	fix := &Fix{Summary: fmt.Sprintf("raise %s to %d", KeyMaxMapCount, target),
		Sysctl: map[string]string{KeyMaxMapCount: strconv.Itoa(target)}, Bounds: map[string]Bound{KeyMaxMapCount: {Dir: AtLeast}}}
	switch {
	case over(int64(demand), int64(limit)):
		fd.Status, fd.Fix = Fail, fix
		fd.Reason = fmt.Sprintf("the broker needs about %d memory maps of the %d allowed (over %d%%): at the limit mmap of a new segment's index fails and the broker dies with \"Map failed\"%s", demand, limit, headroomPct, note)
	case limit < c.p.MaxMapCount:
		fd.Status, fd.Severity, fd.Fix = Warn, c.warning(), fix
		fd.Reason = fmt.Sprintf("%s is %d, below %d: the broker's %d maps fit today, but every new partition adds two%s", KeyMaxMapCount, limit, c.p.MaxMapCount, demand, note)
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("%s = %d leaves room for the broker's %d maps%s", KeyMaxMapCount, limit, demand, note)
	}
	return fd
}

func evalBrokerSwap(c *evalCtx) Finding {
	p, stop := c.process()
	if stop != nil {
		return *stop
	}
	if p.SwapKB < 0 {
		return unknown(unread(p, "status", "the broker's VmSwap (/proc/PID/status)"))
	}
	fd := Finding{Observed: fmt.Sprintf("VmSwap %d kB", p.SwapKB), Expected: "0 kB"}
	if p.SwapKB == 0 {
		fd.Status, fd.Reason = Pass, "none of the broker's memory is in swap"
		return fd
	}
	fd.Status = Fail
	fd.Reason = fmt.Sprintf("%d kB of the broker's memory is in swap: a request or a GC that touches it waits for the disk", p.SwapKB)
	fd.Fix = &Fix{Summary: "keep the broker out of swap",
		Manual: "find what pushed the broker out (its heap and the other processes against MemTotal), set vm.swappiness=1 so the kernel drops page cache before it swaps the broker (see the swappiness rule), or turn swap off on brokers; swapped pages come back as the broker touches them"}
	return fd
}

// akMinor is the broker's Apache Kafka major*100+minor (307 for 3.7), or
// why it is not known.
func (c *evalCtx) akMinor() (int, string, bool) {
	kv := c.kafkaVersion()
	switch {
	case kv.ak == "" && kv.desc != "":
		return 0, kv.desc + ": which Apache Kafka release it is, is not known (a Confluent Platform release not in confluent.yaml, or the distribution not recorded)", false
	case kv.ak == "":
		return 0, kv.reason, false
	}
	v, ok := kafkaNumber(kv.ak)
	if !ok || len(v.Segments()) < 2 {
		return 0, "Apache Kafka version " + kv.ak + " is not a version number", false
	}
	s := v.Segments()
	return s[0]*100 + s[1], "", true
}

func evalJVMVersion(c *evalCtx) Finding {
	p, stop := c.process()
	if stop != nil {
		return *stop
	}
	if p.JavaVersion == "" {
		what := "the broker's Java version (the release file beside " + strings.TrimSpace(p.Exe+" "+p.ExeFrom) + ")"
		if p.Exe == "" {
			return unknown(unread(p, "exe", "the broker's java binary (/proc/PID/exe)"))
		}
		return unknown(unread(p, "release", what))
	}
	major, ok := javaMajor(p.JavaVersion)
	if !ok {
		return unknown(fmt.Sprintf("Java version %q is not a version number", p.JavaVersion))
	}
	fd := Finding{Observed: "Java " + p.JavaVersion + " (" + p.Exe + ")"}
	ak, why, ok := c.akMinor()
	if !ok {
		return Finding{Status: Unknown, Observed: fd.Observed, Reason: "Java " + p.JavaVersion + " found, but which Java the broker supports depends on its Kafka version: " + why}
	}
	js := javaSupportOf(ak)
	fd.Expected = "Java " + joinInts(js.supported)
	upgrade := &Fix{Summary: "run the broker on a supported Java", Restart: true,
		Manual: fmt.Sprintf("install a supported JDK (%s; Java 17 or 21 for Kafka 4.0 and later), point the broker's JAVA_HOME at it (the service's Environment= or kafka-run-class.sh's environment) and restart the broker, one at a time", fd.Expected)}
	switch {
	case !slices.Contains(js.supported, major) && major > js.supported[len(js.supported)-1]:
		fd.Status, fd.Severity = Warn, c.warning()
		fd.Reason = fmt.Sprintf("Java %d is newer than the Java releases this Kafka lists (%s): support is best effort", major, js.doc)
	case !slices.Contains(js.supported, major):
		fd.Status, fd.Fix = Fail, upgrade
		fd.Reason = fmt.Sprintf("Java %d is not supported for this broker (%s)", major, js.doc)
	case slices.Contains(js.deprecated, major):
		fd.Status, fd.Severity, fd.Fix = Warn, c.warning(), upgrade
		fd.Reason = fmt.Sprintf("Java %d is deprecated for the broker and removed in Kafka 4.0 (%s): upgrade Java before Kafka", major, js.doc)
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("Java %d is supported (%s)", major, js.doc)
	}
	return fd
}

// javaMajor is a Java version's feature release: 8 for "1.8.0_392".
func javaMajor(v string) (int, bool) {
	f := strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(f[0])
	if n == 1 && len(f) > 1 {
		n, err = strconv.Atoi(f[1])
	}
	return n, err == nil && n > 0
}

// heapGuide is the heap ops.html's typical arguments give a broker
// (-Xmx6g -Xms6g): more rarely helps, since Kafka serves reads from the
// page cache, not the heap.
const heapGuide = 6 << 30

func gib(n int64) string {
	if n%(1<<30) == 0 {
		return strconv.FormatInt(n>>30, 10) + "g"
	}
	return strconv.FormatInt(n>>20, 10) + "m"
}

func evalJVMHeap(c *evalCtx) Finding {
	p, stop := c.process()
	if stop != nil {
		return *stop
	}
	if _, denied := p.Unread["heap"]; denied {
		return unknown(unread(p, "heap", "the broker's JVM command line (/proc/PID/cmdline)"))
	}
	fd := Finding{Observed: fmt.Sprintf("-Xms%s -Xmx%s", flagText(p.Xms), flagText(p.Xmx)), Expected: "-Xms = -Xmx, about 6g, at most half of MemTotal"}
	if p.MemTotalKB >= 0 {
		fd.Observed += fmt.Sprintf(", MemTotal %s", gib(p.MemTotalKB<<10))
	}
	half := p.MemTotalKB << 10 / 2
	target := int64(heapGuide)
	if p.MemTotalKB > 0 {
		target = max(min(target, half>>30<<30), 1<<30)
	}
	fix := &Fix{Summary: fmt.Sprintf("set the broker's heap to -Xms%[1]s -Xmx%[1]s", gib(target)), Restart: true,
		Manual: fmt.Sprintf("set KAFKA_HEAP_OPTS=\"-Xms%[1]s -Xmx%[1]s\" in the broker's environment (the service's Environment= or the environment of kafka-server-start.sh) and restart the broker, one at a time", gib(target))}
	switch {
	case p.Xmx == 0:
		fd.Status, fd.Severity, fd.Fix = Warn, c.warning(), fix
		fd.Reason = "no -Xmx on the broker's command line: the JVM picks the heap from the host's memory (a quarter of it by default) instead of a size chosen for Kafka"
	case p.MemTotalKB > 0 && p.Xmx > half:
		fd.Status, fd.Fix = Fail, fix
		fd.Reason = fmt.Sprintf("-Xmx%s is more than half of MemTotal (%s): Kafka reads and writes through the page cache, which gets what the heap leaves", gib(p.Xmx), gib(p.MemTotalKB<<10))
	case p.Xms != p.Xmx:
		fd.Status, fd.Severity, fd.Fix = Warn, c.warning(), fix
		fd.Reason = "-Xms differs from -Xmx: the JVM resizes the heap under load (GC pauses, memory the host may not have when it grows)"
	case p.MemTotalKB < 0:
		fd.Status = Unknown
		fd.Reason = "-Xms = -Xmx, but " + unread(p, "meminfo", "MemTotal (/proc/meminfo)") + ": whether the heap leaves the page cache enough is not known"
	case p.Xmx > heapGuide:
		fd.Status, fd.Severity, fd.Fix = Warn, c.warning(), fix
		fd.Reason = fmt.Sprintf("-Xmx%s is above the 6g Kafka's documentation runs its busiest brokers with: a larger heap rarely helps Kafka and lengthens GC pauses", gib(p.Xmx))
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("-Xms = -Xmx = %s, at most half of MemTotal", gib(p.Xmx))
	}
	return fd
}

func flagText(n int64) string {
	if n == 0 {
		return "(unset)"
	}
	return gib(n)
}
