package facts

// CgroupMemory is the broker's memory cgroup as the gather's
// broker-cgroup section read it: the cgroup of the memory controller in
// /proc/PID/cgroup and the limits of it and of each ancestor up to the
// hierarchy's root, under /sys/fs/cgroup (v2) or /sys/fs/cgroup/memory
// (v1).
type CgroupMemory struct {
	// Version is 1 or 2; 0 when /proc/PID/cgroup names no memory
	// controller (none is mounted: no limit).
	Version int `json:"version"`
	// Path is the broker's cgroup ("/system.slice/kafka.service").
	Path string `json:"path,omitempty"`
	// NoDir: Path is not a directory under the mount kaudit reads (a
	// container's view, another mount layout): the limits are not known.
	NoDir bool `json:"no_dir,omitempty"`
	// Member says whether the broker's pid is in the directory's
	// cgroup.procs, the proof that the directory read is the broker's.
	Member Membership `json:"member,omitempty"`
	// Limits are the limit files read, the broker's cgroup first, then
	// each ancestor's.
	Limits []CgroupLimit `json:"limits,omitempty"`
}

// Membership is CgroupMemory.Member.
type Membership string

const (
	MemberYes     Membership = "yes"
	MemberNo      Membership = "no"
	MemberUnknown Membership = "unknown" // cgroup.procs unreadable or too long to read
)

// CgroupLimit is one limit file of one cgroup.
type CgroupLimit struct {
	Path string `json:"path"` // the cgroup ("/system.slice")
	File string `json:"file"` // memory.max, memory.high, memory.limit_in_bytes
	// Bytes is the limit; Unlimited for "max" or a v1 value of 2^62 or
	// more (the kernel's "no limit", 9223372036854771712 on 64-bit).
	Bytes int64 `json:"bytes"`
	// Absent: the cgroup has no such file (v2: the memory controller is
	// not enabled at this level, so no limit of its own). Unread: why
	// the value is not known ("denied", "not a number: …").
	Absent bool   `json:"absent,omitempty"`
	Unread string `json:"unread,omitempty"`
}

// BlockDevices are the block devices under the log directories' mounts,
// as the gather's log-devices section followed them through /sys.
type BlockDevices struct {
	// ByNumber maps a mount's device number ("8:2", LogDir.Device) to its
	// node in /sys/class/block ("sda2"); "" when /sys/dev/block has no
	// such number (not a block device: tmpfs, NFS, btrfs's anonymous
	// numbers).
	ByNumber map[string]string `json:"by_number"`
	// Nodes are the nodes followed, by name.
	Nodes map[string]BlockNode `json:"nodes"`
	// NoSys: /sys/dev/block is not there (a container without /sys):
	// nothing could be followed.
	NoSys bool `json:"no_sys,omitempty"`
	// Truncated: the walk stopped at its bound; nodes may be missing.
	Truncated bool `json:"truncated,omitempty"`
}

// BlockKind is what a block node is.
type BlockKind string

const (
	BlockDisk      BlockKind = "disk"      // a whole device with its own queue (sd, nvme, vd, loop)
	BlockPartition BlockKind = "partition" // a partition: its queue is its disk's
	BlockDM        BlockKind = "dm"        // device mapper (LVM, dm-crypt, multipath): slaves below
	BlockMD        BlockKind = "md"        // software RAID: slaves below
	BlockLoop      BlockKind = "loop"      // a loop device over a file: its I/O goes to that file's disk
)

// BlockNode is one block device node and its queue settings.
type BlockNode struct {
	Name string    `json:"name"`
	Kind BlockKind `json:"kind"`
	// Disk is a partition's disk; DMName a dm device's name (vg-lv).
	Disk   string `json:"disk,omitempty"`
	DMName string `json:"dm_name,omitempty"`
	// Slaves are the nodes below a dm or md device.
	Slaves []string `json:"slaves,omitempty"`
	// Scheduler is the selected I/O scheduler ("mq-deadline", "none");
	// "" when the queue has no scheduler file or it was not read.
	Scheduler string `json:"scheduler,omitempty"`
	// ReadAheadKB is queue/read_ahead_kb; -1 when not read.
	ReadAheadKB int `json:"read_ahead_kb"`
	// Rotational is queue/rotational: 1 spinning, 0 not; -1 not read.
	Rotational int `json:"rotational"`
	// Unread maps a queue file not read to why ("absent", "denied").
	Unread map[string]string `json:"unread,omitempty"`
}
