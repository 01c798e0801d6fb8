package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// The broker's memory cgroup and the block devices under its log dirs
// (the gather's broker-cgroup and log-devices sections).

// pageCacheFloorMin is the least page cache a cgroup limit must leave the
// broker beyond its heap; the floor is the heap's own size when that is
// larger (the catalog's broker-cgroup-memory rationale says why).
const pageCacheFloorMin = int64(1) << 30

// cgroupBound is the tightest limit on the broker's cgroup or an
// ancestor's: its bytes (facts.Unlimited: none) and where it is set.
type cgroupBound struct {
	bytes      int64
	file, path string
}

// bound is the cgroup's tightest limit, or why it is not known.
func cgroupLimitOf(cg *facts.CgroupMemory) (cgroupBound, string) {
	switch {
	case cg.Version == 0:
		return cgroupBound{bytes: facts.Unlimited}, ""
	case cg.NoDir:
		return cgroupBound{}, "the broker's cgroup " + cg.Path + " is not a directory under /sys/fs/cgroup here (a container's view, or another mount layout): its memory limit is not known"
	case cg.Member == facts.MemberNo:
		return cgroupBound{}, "the broker's pid is not in " + cg.Path + "/cgroup.procs: the directory read is not its cgroup (another cgroup namespace)"
	case cg.Member != facts.MemberYes:
		return cgroupBound{}, cg.Path + "/cgroup.procs could not be read (or is too long): the directory is not proven to be the broker's cgroup"
	case len(cg.Limits) == 0:
		return cgroupBound{}, "no memory limit file of " + cg.Path + " was read"
	}
	b := cgroupBound{bytes: facts.Unlimited}
	for _, l := range cg.Limits {
		switch {
		case l.Unread != "":
			return cgroupBound{}, fmt.Sprintf("%s of %s not readable (%s)", l.File, l.Path, l.Unread)
		case l.Absent, l.Bytes == facts.Unlimited:
		case b.bytes == facts.Unlimited || l.Bytes < b.bytes:
			b = cgroupBound{bytes: l.Bytes, file: l.File, path: l.Path}
		}
	}
	return b, ""
}

func evalCgroupMemory(c *evalCtx) Finding {
	k := c.f.Kafka
	if k == nil {
		return c.noKafkaFinding()
	}
	if k.Cgroup == nil {
		return unknown(c.notGathered(facts.SecCgroup, "the broker's memory cgroup"))
	}
	b, why := cgroupLimitOf(k.Cgroup)
	if why != "" {
		return unknown(why)
	}
	if b.bytes == facts.Unlimited {
		fd := Finding{Status: Pass, Observed: "no memory limit on the broker's cgroup or its parents", Expected: "no limit, or at least the heap plus a page-cache floor",
			Reason: "the broker's cgroup has no memory limit: the page cache may use the host's free memory"}
		if k.Cgroup.Version == 0 {
			fd.Observed, fd.Reason = "no memory cgroup controller", "no memory controller holds the broker: nothing limits its page cache"
		}
		return fd
	}
	heap, heapWhy := brokerHeap(k.Process)
	floor := max(heap, pageCacheFloorMin)
	fd := Finding{Observed: fmt.Sprintf("%s %s on %s (cgroup v%d); heap %s", b.file, gib(b.bytes), b.path, k.Cgroup.Version, heapWhy),
		Expected: "the limit at least the heap plus a page-cache floor (the heap's size again, at least 1 GiB)"}
	switch need := heap + floor; {
	case heap < 0 && b.bytes >= pageCacheFloorMin*2:
		return unknown(fmt.Sprintf("%s %s on %s, but the broker's heap is not known (%s): the page-cache room cannot be judged", b.file, gib(b.bytes), b.path, heapWhy))
	case heap < 0, b.bytes < need:
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%s of %s is %s, under %s (the heap plus %s of page cache): the page cache, Kafka's working set, is reclaimed inside the limit, so consumers read from disk and the JVM's own memory beyond the heap risks an OOM kill", b.file, b.path, gib(b.bytes), gib(max(need, 2*pageCacheFloorMin)), gib(floor))
		fd.Fix = cgroupFix(k, b, max(need, 2*pageCacheFloorMin))
	default:
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("%s of %s is %s: room for the heap and %s of page cache", b.file, b.path, gib(b.bytes), gib(b.bytes-heap))
	}
	return fd
}

// brokerHeap is -Xmx in bytes and its text, or -1 and why not known.
func brokerHeap(p *facts.BrokerProcess) (int64, string) {
	switch {
	case p == nil:
		return -1, "the broker process was not read"
	case p.Unread["heap"] != "" || p.Unread["cmdline"] != "":
		return -1, "its command line is not readable (" + p.Unread["heap"] + p.Unread["cmdline"] + ")"
	case p.Xmx == 0:
		return -1, "no -Xmx on its command line: the JVM sizes the heap from the memory it sees"
	}
	return p.Xmx, "-Xmx " + gib(p.Xmx)
}

func cgroupFix(k *facts.Kafka, b cgroupBound, want int64) *Fix {
	directive := "MemoryMax"
	switch {
	case b.file == "memory.high":
		directive = "MemoryHigh"
	case k.Cgroup.Version == 1:
		directive = "MemoryLimit" // systemd's v1 directive
	}
	where := "the cgroup " + b.path + " (the container's or pod's memory limit, or the slice's)"
	if k.Unit != nil && k.Unit.Name != "" && k.Unit.SystemdRuns && strings.HasSuffix(b.path, "/"+k.Unit.Name) {
		where = fmt.Sprintf("systemctl set-property %s %s=%d (applies now and persists as a drop-in; or systemctl edit %s: [Service] %s=%d)", k.Unit.Name, directive, want, k.Unit.Name, directive, want)
	}
	return &Fix{Summary: fmt.Sprintf("raise the broker's cgroup memory limit to at least %s", gib(want)),
		Manual: fmt.Sprintf("raise %s of %s to at least %d bytes: %s; or lower -Xmx", b.file, b.path, want, where)}
}

// logDevice is one log directory's block devices: the mounted node and
// the disks below it, or why they are not known.
type logDevice struct {
	dir   string
	top   facts.BlockNode
	disks []facts.BlockNode
}

// disksUnder follows a node down to its disks (a partition to its disk,
// dm and md through their slaves), at most depth 16.
func disksUnder(d *facts.BlockDevices, name string, depth int) ([]facts.BlockNode, string) {
	n, ok := d.Nodes[name]
	switch {
	case !ok:
		return nil, "the block device " + name + " was not followed"
	case depth > 16:
		return nil, "the device stack under " + name + " is deeper than 16"
	case n.Kind == facts.BlockPartition:
		return disksUnder(d, n.Disk, depth+1)
	case n.Kind == facts.BlockDisk, n.Kind == facts.BlockLoop:
		return []facts.BlockNode{n}, ""
	case len(n.Slaves) == 0:
		return nil, n.Name + " (" + string(n.Kind) + ") lists no devices below it"
	}
	var out []facts.BlockNode
	for _, s := range n.Slaves {
		ds, why := disksUnder(d, s, depth+1)
		if why != "" {
			return nil, why
		}
		out = append(out, ds...)
	}
	return out, ""
}

// logDevices resolves every log directory to its devices, or says why not.
func (c *evalCtx) logDevices() ([]logDevice, string) {
	k := c.f.Kafka
	switch {
	case k.LogDirs == nil:
		return nil, c.notGathered(facts.SecLogDirs, "the log directories")
	case k.Devices == nil:
		return nil, c.notGathered(facts.SecLogDevices, "the block devices under the log directories")
	}
	return resolveLogDevices(k)
}

// resolveLogDevices is logDevices on gathered facts.
func resolveLogDevices(k *facts.Kafka) ([]logDevice, string) {
	if k.Devices.NoSys {
		return nil, "/sys/dev/block is not there (a container without /sys): the log directories' devices are not known"
	}
	var out []logDevice
	for _, ld := range k.LogDirs {
		name, ok := k.Devices.ByNumber[ld.Device]
		switch {
		case ld.Device == "":
			return nil, "the mount of " + ld.Path + " was not found"
		case !ok:
			return nil, "the device " + ld.Device + " of " + ld.Path + " was not followed"
		case name == "":
			return nil, fmt.Sprintf("%s is on %s (%s), which has no block device number (%s): its disks are not known", ld.Path, ld.Mount, ld.FSType, ld.Device)
		}
		disks, why := disksUnder(k.Devices, name, 0)
		if why != "" {
			return nil, ld.Path + ": " + why
		}
		out = append(out, logDevice{dir: ld.Path, top: k.Devices.Nodes[name], disks: disks})
	}
	return out, ""
}

// cgroupPeerValues is the peers: fact broker.cgroup_memory: the tightest
// limit on the broker's cgroup, when known.
func cgroupPeerValues(f *facts.Facts) []peerValue {
	if f.Kafka == nil || f.Kafka.Cgroup == nil {
		return nil
	}
	b, why := cgroupLimitOf(f.Kafka.Cgroup)
	switch {
	case why != "":
		return nil
	case b.bytes == facts.Unlimited:
		return one("broker cgroup memory limit", "none")
	}
	return one("broker cgroup memory limit", gib(b.bytes))
}

// devicePeerValues is the peers: fact log_dirs.devices: per log
// directory (by its position in log.dirs), its disks' schedulers and rotational flags and the mounted
// device's read-ahead, each when read.
func devicePeerValues(f *facts.Facts) []peerValue {
	if f.Kafka == nil || f.Kafka.LogDirs == nil || f.Kafka.Devices == nil {
		return nil
	}
	lds, why := resolveLogDevices(f.Kafka)
	if why != "" {
		return nil
	}
	var out []peerValue
	for i, ld := range lds {
		dir := "log dir " + strconv.Itoa(i+1) // by position: brokers' paths may differ
		var sched, rot []string
		for _, d := range ld.disks {
			if d.Scheduler != "" && !slices.Contains(sched, d.Scheduler) {
				sched = append(sched, d.Scheduler)
			}
			if r := strconv.Itoa(d.Rotational); d.Rotational >= 0 && !slices.Contains(rot, r) {
				rot = append(rot, r)
			}
		}
		slices.Sort(sched)
		slices.Sort(rot)
		out = append(out, one("I/O scheduler of the disks under "+dir, strings.Join(sched, ","))...)
		out = append(out, one("rotational flag of the disks under "+dir, strings.Join(rot, ","))...)
		if ld.top.ReadAheadKB >= 0 {
			out = append(out, one("read-ahead (KB) of the device of "+dir, strconv.Itoa(ld.top.ReadAheadKB))...)
		}
	}
	return out
}

func evalLogDevices(c *evalCtx) Finding {
	if c.f.Kafka == nil {
		return c.noKafkaFinding()
	}
	lds, why := c.logDevices()
	if why != "" {
		return unknown(why)
	}
	var unread, loops, bad, obs []string
	for _, ld := range lds {
		var ds []string
		for _, d := range ld.disks {
			ds = append(ds, diskText(d))
			switch {
			case d.Kind == facts.BlockLoop:
				loops = addOnce(loops, d.Name)
			case d.Rotational == 1 && d.Scheduler == "none":
				bad = addOnce(bad, d.Name)
			case d.Rotational < 0 || d.Scheduler == "":
				unread = addOnce(unread, d.Name)
			}
		}
		obs = append(obs, fmt.Sprintf("%s on %s (read-ahead %s): %s", ld.dir, nodeText(ld.top), kbText(ld.top.ReadAheadKB), strings.Join(ds, ", ")))
	}
	fd := Finding{Observed: strings.Join(obs, "; "), Expected: "no spinning disk without an I/O scheduler"}
	switch {
	case len(bad) > 0:
		fd.Status = Warn
		fd.Reason = "rotational disk " + strings.Join(bad, ", ") + " under the log directories runs without an I/O scheduler (none): on a spinning disk the segment writes and lagging consumers' reads are not sorted or merged; mq-deadline (or bfq) is the advice for rotational disks. A virtual disk or a RAID controller may report rotational 1 over flash: check what is behind it"
		fd.Fix = &Fix{Summary: "use mq-deadline on the rotational disks under the log directories",
			Manual: "echo mq-deadline > /sys/block/DISK/queue/scheduler for " + strings.Join(bad, ", ") + ", and persist it with a udev rule (ACTION==\"add|change\", KERNEL==\"sd*\", ATTR{queue/rotational}==\"1\", ATTR{queue/scheduler}=\"mq-deadline\"); no broker restart", WhenWarn: true}
	case len(unread) > 0:
		fd.Status, fd.Reason = Unknown, "the queue settings of "+strings.Join(unread, ", ")+" were not read"
	case len(loops) > 0:
		fd.Status, fd.Reason = Unknown, strings.Join(loops, ", ")+": a loop device over a file; its I/O goes to the disk under that file, which is not followed"
	default:
		fd.Status, fd.Reason = Pass, "every disk under the log directories has a scheduler fit for it (reported: scheduler, read-ahead, rotational)"
	}
	return fd
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func nodeText(n facts.BlockNode) string {
	if n.DMName != "" {
		return n.Name + " (" + n.DMName + ")"
	}
	return n.Name
}

func diskText(d facts.BlockNode) string {
	rot := map[int]string{1: "rotational", 0: "non-rotational", -1: "rotational not read"}[d.Rotational]
	if d.Kind == facts.BlockLoop {
		rot = "loop, " + rot
	}
	s := cmp.Or(d.Scheduler, "scheduler not read")
	return fmt.Sprintf("%s %s %s read-ahead %s", d.Name, rot, s, kbText(d.ReadAheadKB))
}

func kbText(kb int) string {
	if kb < 0 {
		return "not read"
	}
	return strconv.Itoa(kb) + " KB"
}

// peerCgroup is the copy of a broker's cgroup that FleetFacts keeps for
// the peer comparison (cgroupPeerValues).
func peerCgroup(cg *facts.CgroupMemory) *facts.CgroupMemory {
	if cg == nil {
		return nil
	}
	out := *cg
	out.Path, out.Member = strings.Clone(cg.Path), facts.Membership(strings.Clone(string(cg.Member)))
	out.Limits = cloneSlice(cg.Limits, func(l facts.CgroupLimit) facts.CgroupLimit {
		l.Path, l.File, l.Unread = strings.Clone(l.Path), strings.Clone(l.File), strings.Clone(l.Unread)
		return l
	})
	return &out
}

// peerDevices is the copy of a broker's block devices that FleetFacts
// keeps for the peer comparison (devicePeerValues).
func peerDevices(d *facts.BlockDevices) *facts.BlockDevices {
	if d == nil {
		return nil
	}
	out := *d
	out.ByNumber = cloneMap(d.ByNumber, strings.Clone)
	out.Nodes = cloneMap(d.Nodes, func(n facts.BlockNode) facts.BlockNode {
		n.Name, n.Kind, n.Disk, n.DMName = strings.Clone(n.Name), facts.BlockKind(strings.Clone(string(n.Kind))), strings.Clone(n.Disk), strings.Clone(n.DMName)
		n.Slaves = cloneSlice(n.Slaves, strings.Clone)
		n.Scheduler = strings.Clone(n.Scheduler)
		n.Unread = cloneMap(n.Unread, strings.Clone)
		return n
	})
	return &out
}
