// Package facts defines what kaudit knows about one host after gathering:
// plain data, no behaviour, no I/O. The gatherer fills it, the rules read it,
// the reporters print it. It imports nothing from kaudit so that every layer
// can depend on it without pulling in SSH or the terminal.
package facts

// Facts is everything gathered from one host in one session.
//
// A nil pointer or an empty map means "not gathered"; why is recorded in
// Sections under the section's name, so rules can answer "unknown" with a
// reason instead of guessing.
type Facts struct {
	// KafkaPort is the broker listener port kaudit looked for (inventory, default 9092).
	KafkaPort int `json:"kafka_port"`
	// Role is the profile the host was gathered with: RoleClient for a
	// producer/consumer host (the inventory's clients group), "" for a
	// broker.
	Role   Role              `json:"role,omitempty"`
	Kernel Kernel            `json:"kernel"`
	Sysctl map[string]string `json:"sysctl"` // runtime values read from /proc/sys, keys dotted (net.core.somaxconn), whitespace folded to one space
	// SysctlUnread maps each key the gather asked for and could not read
	// to why, as the script said it: "absent" (no such entry: its module
	// is not loaded or the kernel was built without it), "denied",
	// "unreadable".
	SysctlUnread map[string]string           `json:"sysctl_unread,omitempty"`
	Persisted    map[string]PersistedSysctl  `json:"persisted"` // the value each key will have after boot, and the file that wins
	Netstat      map[string]map[string]int64 `json:"netstat"`   // "TcpExt" -> counter -> value, parsed by header name
	Listeners    []Listener                  `json:"listeners"`
	// Established counts the ESTABLISHED TCP connections per local
	// address:port of every listening port (counted on the host from the
	// gather's one `ss -tinp state listening state established`): what
	// would reconnect after a restart.
	Established []LocalConns `json:"established"`
	// Conns are established connections with their window scales
	// (`ss -ti`, the same run): on a broker those on its Kafka ports, on a
	// client host (`ss -tin state established`) those to the brokers'
	// Kafka ports. At most a bound are kept; ConnsTotal is how many there
	// were.
	Conns      []Conn   `json:"conns"`
	ConnsTotal int      `json:"conns_total,omitempty"`
	Kafka      *Kafka   `json:"kafka"`
	NICs       []NIC    `json:"nics"`
	Evidence   Evidence `json:"evidence"`
	// Feasibility is what this host lets kaudit change (nil: not gathered).
	Feasibility *Feasibility `json:"feasibility,omitempty"`
	// Probe is the SYN-cookie window-scale probe's outcome: of this run
	// (kaudit scan --probe, fix --probe), or one kaudit recorded for this
	// boot of this host (Probe.Recorded set: audit/probe's Records); nil
	// when there is neither.
	Probe *Probe `json:"probe,omitempty"`
	// EarlierProbe is the last probe kaudit recorded for this host when it
	// ran on another boot or kernel (stale: it does not decide this boot's
	// verdict, which the rules say).
	EarlierProbe *Probe `json:"earlier_probe,omitempty"`
	// HostKey is the SHA-256 fingerprint of the SSH host key this host's
	// session was verified with ("local" for a local run; "" when the
	// runner does not say): the identity a recorded probe is kept under.
	HostKey string `json:"host_key,omitempty"`
	// Sections maps a gather section name to its status when it was not
	// fully successful: missing tool, permission denied, error text.
	Sections map[string]SectionStatus `json:"sections,omitempty"`
	// Files are the plain files the catalog names (a peers: fact
	// "file:PATH"), read by the gather's host section: path → the file's
	// lines joined by one space. A file that could not be read is absent,
	// and the host section's status names it.
	Files map[string]string `json:"files,omitempty"`
	// Host is what the gather's host section read beyond the sysctls: the
	// NUMA nodes, the clock. Nil: not gathered (an older script, a client
	// host).
	Host *HostInfo `json:"host,omitempty"`
	// TimeSync, ConntrackStat and ReverseDNS are the host services'
	// sections (hostsvc.go); nil when not gathered, Sections says why.
	TimeSync      *TimeSync      `json:"time_sync,omitempty"`
	ConntrackStat *ConntrackStat `json:"conntrack_stat,omitempty"`
	ReverseDNS    *ReverseDNS    `json:"reverse_dns,omitempty"`
}

// HostInfo is the gather's host section: facts about the machine the
// broker runs on that no other section reads.
type HostInfo struct {
	// NUMANodes is the number of /sys/devices/system/node/nodeN
	// directories; -1 when /sys/devices/system/node is absent (a kernel
	// without NUMA support: one node); 0 when not read.
	NUMANodes int `json:"numa_nodes"`
	// Clock is the host's clock read at the end of the gather, against
	// kaudit's own clock around the session; nil when not read.
	Clock *Clock `json:"clock,omitempty"`
	// Unread maps what could not be read ("numa", "clock") to why.
	Unread map[string]string `json:"unread,omitempty"`
}

// Clock is one reading of a host's clock inside a gather session. The
// host read HostUnixNano at some instant between kaudit's two readings of
// its own clock, before the session started and after its output came
// back: the offset is known to within half that round trip. The report
// keeps the offset and its bound in whole seconds (the offset rounded,
// the bound rounded up, at least 1), so that two scans of the same fleet
// render alike.
type Clock struct {
	HostUnixNano  int64 `json:"-"`
	Measured      bool  `json:"measured"`
	OffsetSeconds int64 `json:"offset_seconds"`
	BoundSeconds  int64 `json:"bound_seconds"`
}

// Measure sets the offset from kaudit's readings (Unix nanoseconds)
// before the session and after its output.
func (c *Clock) Measure(sent, received int64) {
	if received < sent || c.HostUnixNano == 0 {
		return
	}
	mid := sent + (received-sent)/2
	off := c.HostUnixNano - mid
	half := int64(1e9 / 2)
	if off < 0 {
		half = -half
	}
	c.Measured = true
	c.OffsetSeconds = (off + half) / 1e9
	c.BoundSeconds = max(((received-sent)/2+1e9-1)/1e9, 1)
}

// Section names used in Facts.Sections (and in the gather script).
const (
	SecKernel      = "kernel"
	SecOSRelease   = "os-release"
	SecSysctl      = "sysctl"
	SecPersisted   = "sysctl-files"
	SecChangelog   = "kernel-changelog"
	SecNetstat     = "netstat"
	SecListeners   = "listeners"
	SecEstablished = "established"
	SecConns       = "conns"
	SecKafka       = "kafka"
	SecKafkaConf   = "kafka-config"
	SecNICs        = "nics"
	SecEvidence    = "evidence"
	SecFeasible    = "feasibility"
	SecKernelCaps  = "kernel-caps"
	SecLogDirs     = "log-dirs"
	SecProcess     = "broker-process"
	SecKafkaMeta   = "kafka-meta"
	SecBrokerUnit  = "broker-unit"
	SecHost        = "host"
	SecCgroup      = "broker-cgroup"
	SecLogDevices  = "log-devices"
)

// SectionState says how a section is incomplete (SectionStatus.State).
type SectionState string

// Section states; a section that was read whole has no SectionStatus.
const (
	SectionMissing SectionState = "missing" // the tool is absent
	SectionDenied  SectionState = "denied"  // permission
	SectionError   SectionState = "error"   // the command failed or its output was not understood
	SectionAbsent  SectionState = "absent"  // nothing to read, e.g. no such file
	SectionPartial SectionState = "partial" // read, but some of it could not be
)

// SectionStatus says why a section is incomplete.
type SectionStatus struct {
	State   SectionState `json:"state"`
	Message string       `json:"message,omitempty"` // what the host said, trimmed
}

// Kernel identifies the running kernel and distribution.
type Kernel struct {
	Release   string `json:"release"`                     // /proc/sys/kernel/osrelease, e.g. 5.4.0-150-generic
	Version   string `json:"version,omitempty"`           // /proc/version (Debian puts the upstream sublevel there)
	Signature string `json:"version_signature,omitempty"` // /proc/version_signature (Ubuntu), e.g. "Ubuntu 5.4.0-150.167-generic 5.4.233"
	Arch      string `json:"arch,omitempty"`
	// BootID is /proc/sys/kernel/random/boot_id: new on every boot, so a
	// probe verdict kept for this boot (Probe.Recorded) is matched by it.
	BootID     string `json:"boot_id,omitempty"`
	Distro     string `json:"distro"`                   // os-release ID, e.g. ubuntu, centos, rhel, debian, amzn
	DistroVer  string `json:"distro_version,omitempty"` // os-release VERSION_ID
	DistroLike string `json:"distro_like,omitempty"`    // os-release ID_LIKE
	Pretty     string `json:"pretty_name,omitempty"`    // os-release PRETTY_NAME
	// Changelog is what the kernel package changelog says about commit
	// 909172a, when it could be read cheaply (rpm/deb). Nil: not read.
	Changelog *KernelChangelog `json:"changelog,omitempty"`
}

// KernelChangelog is the evidence found in the installed kernel package's changelog.
type KernelChangelog struct {
	Source     string `json:"source"`                 // e.g. "rpm -q --changelog kernel-3.10.0-1160.el7.x86_64"
	HasFix     bool   `json:"has_fix"`                // the exact title "net: Update window_clamp if SOCK_RCVBUF is set" is present
	LastLTSTag string `json:"last_lts_tag,omitempty"` // Oracle UEK: highest "LTS tag: vX.Y.Z" seen, e.g. "v5.4.78"
}

// PersistedSysctl is the boot-time value of one sysctl key.
type PersistedSysctl struct {
	Value string `json:"value"` // whitespace folded to one space
	File  string `json:"file"`  // the file whose assignment wins at boot
	Line  int    `json:"line"`
	// Overridden lists earlier assignments that lose to File, "path:line=value".
	Overridden []string `json:"overridden,omitempty"`
}

// Listener is one LISTEN socket from `ss -ltn`.
type Listener struct {
	Addr    string `json:"addr"` // local address as ss prints it, e.g. "0.0.0.0", "[::]", "*"
	Port    int    `json:"port"`
	Backlog int    `json:"backlog"`           // Send-Q: the effective backlog, min(requested, somaxconn)
	Queue   int    `json:"queue"`             // Recv-Q: current accept-queue length
	PID     int    `json:"pid,omitempty"`     // from ss -p when permitted and some process is a broker candidate
	Process string `json:"process,omitempty"` // likewise
}

// Role is the profile a host was gathered with (Facts.Role): RoleClient,
// or "" for a broker.
type Role string

// RoleClient marks a host gathered with the client profile (Facts.Role).
const RoleClient Role = "client"

// LocalConns is the number of ESTABLISHED connections on one local
// address and port, as ss printed the address ("10.0.0.1",
// "[::ffff:10.0.0.1]", "[fd10::1]").
type LocalConns struct {
	Addr  string `json:"addr"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

// Conn is one established TCP connection from `ss -tin`, addresses as ss
// printed them. SndWscale is the scale the peer advertised (applied to
// the windows it sends), RcvWscale the one this side advertised; both -1
// when ss printed no wscale (window scaling not in use).
type Conn struct {
	Local     string `json:"local"`
	LocalPort int    `json:"local_port"`
	Peer      string `json:"peer"`
	PeerPort  int    `json:"peer_port"`
	SndWscale int    `json:"snd_wscale"`
	RcvWscale int    `json:"rcv_wscale"`
}

// Kafka describes the broker found on the host.
type Kafka struct {
	PID          int    `json:"pid,omitempty"`
	FoundBy      string `json:"found_by,omitempty"` // "listener" (pid of the listener on the Kafka port) or "cmdline" (a kafka.Kafka process)
	Version      string `json:"version"`            // as the jar names it, without -ccs: "2.8.1" (Apache) or "7.1.0" (Confluent Platform)
	Distribution string `json:"distribution"`       // "apache" or "confluent"; "" when unknown
	Jar          string `json:"jar,omitempty"`      // the core jar the version came from, e.g. /opt/kafka/libs/kafka_2.13-2.8.1.jar
	Scala        string `json:"scala,omitempty"`
	Config       string `json:"config,omitempty"` // server.properties path from the command line (or inventory override)
	// Properties holds only the keys that matter (gather.KafkaKeys:
	// socket.listen.backlog.size, the socket buffers, listeners, log.dirs,
	// num.network.threads): kaudit never reads the rest of the file off
	// the host, because it can hold secrets.
	Properties map[string]string `json:"properties"`
	// PropertyLines maps each key in Properties to its line in Config.
	PropertyLines map[string]int `json:"property_lines,omitempty"`
	// LogDirs are the broker's log directories as Kafka picks them
	// (log.dirs, else log.dir, else Kafka's default /tmp/kafka-logs),
	// each with what the host says about it. Nil: not gathered; the
	// log-dirs section says why.
	LogDirs []LogDir `json:"log_dirs,omitempty"`
	// Running is what the running broker reports for the keys of
	// Properties (DescribeConfigs, scan --bootstrap), with where each value
	// comes from; set only when the host's meta.properties proved it is
	// that broker. Nil: the cluster was not asked, or did not answer.
	Running map[string]RunningConfig `json:"running,omitempty"`
	// Process is what the broker's own process says about itself
	// (/proc/PID). Nil: not gathered; the broker-process section says why.
	Process *BrokerProcess `json:"process,omitempty"`
	// Unit is the systemd service the broker runs in. Nil: not gathered,
	// or the broker is not a service (a container, a shell, no systemd);
	// the broker-unit section says which.
	Unit *BrokerUnit `json:"unit,omitempty"`
	// Cgroup is the broker's memory cgroup and its limits (storage.go).
	// Nil: not gathered; the broker-cgroup section says why.
	Cgroup *CgroupMemory `json:"cgroup,omitempty"`
	// Devices are the block devices under the log directories
	// (storage.go). Nil: not gathered; the log-devices section says why.
	Devices *BlockDevices `json:"devices,omitempty"`
}

// LogDir is one of the broker's log directories.
type LogDir struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// The mount the directory is on, from /proc/self/mountinfo: its
	// mount point, filesystem type, source (a device, server:/export, a
	// tmpfs name), device number (major:minor), and options (the mount's
	// and the superblock's).
	Mount   string   `json:"mount,omitempty"`
	FSType  string   `json:"fstype,omitempty"`
	Source  string   `json:"source,omitempty"`
	Device  string   `json:"device,omitempty"`
	Options []string `json:"options,omitempty"`
	// SameDeviceAsRoot: the directory's device is the device of "/".
	SameDeviceAsRoot bool `json:"same_device_as_root,omitempty"`
	// Segments is the number of log segments under the directory (one
	// *.index file each); -1 when it could not be counted.
	Segments int `json:"segments"`
	// Meta is the directory's meta.properties (cluster.id, node.id or
	// broker.id); nil when it has none or it could not be read.
	Meta *MetaProperties `json:"meta,omitempty"`
}

// MetaProperties is a log directory's meta.properties, as Kafka writes it.
type MetaProperties struct {
	Version     string `json:"version,omitempty"`
	ClusterID   string `json:"cluster_id,omitempty"`
	NodeID      int    `json:"node_id"`   // KRaft's node.id; -1 when absent
	BrokerID    int    `json:"broker_id"` // ZooKeeper mode's broker.id; -1 when absent
	DirectoryID string `json:"directory_id,omitempty"`
}

// BrokerProcess is what /proc/PID says about the broker process.
type BrokerProcess struct {
	// NoFile is the process's "Max open files" limit (/proc/PID/limits);
	// nil when it could not be read.
	NoFile *Limit `json:"nofile,omitempty"`
	// FDs is the number of descriptors open now (/proc/PID/fd); -1 when
	// it could not be read.
	FDs int `json:"fds"`
	// Maps is the number of memory maps the process has now (lines of
	// /proc/PID/maps, counted on the host); -1 when it could not be read.
	Maps int `json:"maps"`
	// SwapKB is the process's memory in swap (VmSwap in
	// /proc/PID/status), in KiB; -1 when it could not be read.
	SwapKB int64 `json:"swap_kb"`
	// MemTotalKB is the host's MemTotal (/proc/meminfo), in KiB; -1 when
	// it could not be read.
	MemTotalKB int64 `json:"mem_total_kb"`
	// Exe is the process's java binary: readlink /proc/PID/exe, or
	// (ExeFrom "cmdline") the command line's argv[0] when exe is not
	// readable; "" when neither was.
	Exe     string `json:"exe,omitempty"`
	ExeFrom string `json:"exe_from,omitempty"`
	// JavaVersion is JAVA_VERSION of the release file of the JDK or JRE
	// Exe belongs to ("17.0.9", "1.8.0_392"); "" when not read.
	JavaVersion string `json:"java_version,omitempty"`
	// Xms and Xmx are the JVM's -Xms and -Xmx from its command line, in
	// bytes (-Xmx6g: 6 GiB; the last one wins, as in the JVM); 0 when the
	// command line sets none. Only these flags are read off the host.
	Xms int64 `json:"xms,omitempty"`
	Xmx int64 `json:"xmx,omitempty"`
	// Unread maps what could not be read ("fds", "maps", "exe",
	// "release", "limits", "status", "meminfo", "cmdline") to why
	// ("denied /proc/4242/fd").
	Unread map[string]string `json:"unread,omitempty"`
}

// BrokerUnit is the systemd service the broker process runs in.
type BrokerUnit struct {
	// Name is the service, from /proc/PID/cgroup ("kafka.service",
	// "confluent-server.service"); Cgroup is the path it was read from.
	Name   string `json:"name"`
	Cgroup string `json:"cgroup,omitempty"`
	// SystemdRuns: systemd is the host's service manager
	// (/run/systemd/system exists), so systemctl can restart Name. A
	// cgroup can name a service where systemd does not run (a container
	// sharing the node's cgroup namespace).
	SystemdRuns bool `json:"systemd_runs,omitempty"`
	// NoFile is the LimitNOFILE systemd gives the service at its next
	// start (systemctl show), drop-ins included; nil when not read.
	NoFile *Limit `json:"nofile,omitempty"`
	// FragmentPath and DropIns are the unit file and its drop-ins.
	FragmentPath string   `json:"fragment_path,omitempty"`
	DropIns      []string `json:"drop_ins,omitempty"`
}

// Limit is a soft and hard resource limit; Unlimited stands for "unlimited".
type Limit struct {
	Soft int64 `json:"soft"`
	Hard int64 `json:"hard"`
}

// Unlimited is a Limit value the kernel prints as "unlimited".
const Unlimited int64 = -1

// NIC is one network interface's ring and offload settings.
type NIC struct {
	Name string `json:"name"`
	// MTU is /sys/class/net/IF/mtu (the host section); 0 when not read.
	MTU      int                `json:"mtu,omitempty"`
	Driver   string             `json:"driver,omitempty"`
	Ring     *Ring              `json:"ring"`                 // nil when unsupported or unreadable, see RingErr
	RingErr  string             `json:"ring_error,omitempty"` // e.g. "Operation not supported"
	Features map[string]Feature `json:"features"`             // short names: tso, gso, gro, lro (plus any others parsed)
	FeatErr  string             `json:"features_error,omitempty"`
	// Persist says what persists this interface's settings across a
	// reboot on the host (nil: not gathered).
	Persist *NICPersist `json:"persist,omitempty"`
	// Boot is what the host's own configuration sets on this interface
	// when it next appears (boot, driver reload), read with Persist: nil
	// when not gathered.
	Boot *NICBoot `json:"boot,omitempty"`
}

// NICBoot is what the persistence mechanisms set on one interface at
// boot, setting by setting.
type NICBoot struct {
	// Settings: "rx", "tx" (ring sizes, or "max" from a .link file) and
	// "tso", "gso", "gro", "lro" ("on"/"off") → the value that wins. A
	// setting nothing sets is absent: the driver's default applies.
	Settings map[string]NICBootValue `json:"settings,omitempty"`
	// Unsure lists what was found but could not be settled (a .link
	// [Match] key kaudit does not evaluate, a udev rule it cannot read, a
	// NetworkManager property nmcli would not print): a setting absent
	// from Settings may still come from one of them.
	Unsure []string `json:"unsure,omitempty"`
}

// NICBootValue is one boot-time NIC setting and where it comes from.
type NICBootValue struct {
	Value     string           `json:"value"`
	Mechanism PersistMechanism `json:"mechanism"`
	// Source: "FILE:LINE", or `NetworkManager connection "NAME"`.
	Source string `json:"source"`
	// Overridden lists what sets it earlier at boot and loses,
	// "SOURCE=VALUE".
	Overridden []string `json:"overridden,omitempty"`
}

// PersistMechanism is what persists an interface's settings across a
// reboot (NICPersist.Mechanism, NICBootValue.Mechanism).
type PersistMechanism string

// Persistence mechanisms for NIC settings, in the order of precedence
// kaudit uses when several apply.
const (
	PersistNetworkManager PersistMechanism = "networkmanager" // NetworkManager manages the interface (Connection)
	PersistIfcfg          PersistMechanism = "ifcfg"          // RHEL network-scripts (ifup present): File is ifcfg-IF (ETHTOOL_OPTS)
	PersistIfupdown       PersistMechanism = "ifupdown"       // Debian ifupdown (ifup present): File holds the "iface IF" stanza at Line
	PersistSystemdLink    PersistMechanism = "systemd-link"   // systemd-udevd ≥ 244 applies .link files (99-default.link and /etc/systemd/network exist)
	PersistUdev           PersistMechanism = "udev"           // none of the above: a udev rule running ethtool
)

// NICPersist is what manages one interface's configuration.
type NICPersist struct {
	Mechanism  PersistMechanism `json:"mechanism"`
	Connection string           `json:"connection,omitempty"` // NetworkManager connection name
	// ConnectionUUID is the NetworkManager connection's UUID.
	ConnectionUUID string `json:"connection_uuid,omitempty"`
	// File: ifcfg file, interfaces file with the stanza; for
	// systemd-link an existing .link file (not 99-default.link) that
	// already matches the interface ("" when none).
	File        string `json:"file,omitempty"`
	Line        int    `json:"line,omitempty"`         // ifupdown: the "iface IF" line; ifcfg: the ETHTOOL_OPTS line (0: none)
	EthtoolOpts string `json:"ethtool_opts,omitempty"` // ifcfg: the current ETHTOOL_OPTS value, quotes removed
	NMVersion   string `json:"nm_version,omitempty"`   // nmcli --version, e.g. "1.30.0" (when nmcli is present)
	MAC         string `json:"mac,omitempty"`          // /sys/class/net/IF/address
}

// Ring holds ethtool -g values. -1 means "n/a" (the driver does not report it).
type Ring struct {
	RXMax int `json:"rx_max"`
	TXMax int `json:"tx_max"`
	RX    int `json:"rx"`
	TX    int `json:"tx"`
}

// Size is the current size and pre-set maximum of the rx or tx ring.
func (r *Ring) Size(setting string) (cur, top int) {
	if setting == "tx" {
		return r.TX, r.TXMax
	}
	return r.RX, r.RXMax
}

// Feature is one ethtool -k feature.
type Feature struct {
	On        bool   `json:"on"`
	Fixed     bool   `json:"fixed,omitempty"`     // "[fixed]": cannot be changed
	Requested string `json:"requested,omitempty"` // "on"/"off" from "[requested on]"
}

// Evidence holds kernel log lines that show SYN floods on this host.
type Evidence struct {
	SynFlood []string `json:"syn_flood,omitempty"` // "Possible SYN flooding on port ..." lines (most recent last)
}

// Feasibility is what kaudit's changes need on this host, read without
// changing anything: the gather script's "feasibility" section.
type Feasibility struct {
	// SysctlModes: dotted key → the permission string of its /proc/sys
	// entry as ls -l prints it ("-rw-r--r--"). Root ignores these bits for
	// access checks but the kernel does not: an entry without the owner's
	// write bit (0444) refuses every write, e.g. net.core.rmem_max inside a
	// non-initial network namespace.
	SysctlModes map[string]string `json:"sysctl_modes,omitempty"`
	// NetNS compares /proc/self/ns/net with /proc/1/ns/net: NetNSSameAsInit
	// or NetNSOther; "" when either is unreadable. PID 1 may be a
	// container's own init, so "same" does not prove the initial namespace.
	NetNS string `json:"netns,omitempty"`
	// Dirs: the directories kaudit may write in (sysctl.d, udev rules,
	// NetworkManager, ifcfg, ifupdown, systemd .link, server.properties'
	// directory), by path.
	Dirs map[string]Dir `json:"dirs,omitempty"`
	// SELinux is "enforcing", "permissive" (/sys/fs/selinux/enforce), or
	// "" when there is no selinuxfs.
	SELinux string `json:"selinux,omitempty"`
	// Container is the first sign that this host is a container, sharing
	// its kernel with the node that runs it: "docker (/.dockerenv)",
	// "podman (/run/.containerenv)", "KIND (/run/systemd/container)",
	// "kubernetes (/var/run/secrets/kubernetes.io)"; "" when none was seen.
	Container string `json:"container,omitempty"`
	// ProcSysReadOnly: /proc/sys is on a read-only mount (a container
	// runtime's default), so no sysctl can be written whatever its mode.
	ProcSysReadOnly bool `json:"proc_sys_read_only,omitempty"`
	// Chcon: the chcon tool is present (SELinux contexts can be copied).
	Chcon bool `json:"chcon,omitempty"`
	// Kernel is what the running kernel offers and can load (the gather's
	// "kernel-caps" section); nil when it was not gathered or could not be
	// parsed: then no change is judged on it.
	Kernel *KernelCaps `json:"kernel,omitempty"`
}

// KernelCaps is what the running kernel has registered now and what it
// could load, read without loading anything: the congestion controls and
// queueing disciplines net.ipv4.tcp_congestion_control and
// net.core.default_qdisc can name. Module names are as modprobe knows
// them: "tcp_bbr", "sch_fq".
type KernelCaps struct {
	// Release is /proc/sys/kernel/osrelease ("" when unreadable).
	Release string `json:"release,omitempty"`
	// Congestion is /proc/sys/net/ipv4/tcp_available_congestion_control:
	// the congestion controls registered now (built in or loaded); nil
	// when it could not be read.
	Congestion []string `json:"congestion_available,omitempty"`
	// Modules says whether this kernel can load a module at all.
	Modules ModuleSupport `json:"modules"`
	// ModuleDir is /lib/modules/RELEASE (or /usr/lib/modules/RELEASE) when
	// it exists, "" when the running kernel has no module tree.
	ModuleDir string `json:"module_dir,omitempty"`
	// ModuleDep: ModuleDir's modules.dep was read; Loadable are the tcp_*
	// and sch_* modules it lists (what modprobe can load). Without
	// modules.dep, Files are the tcp_*/sch_* module files found under
	// kernel/net/ipv4 and kernel/net/sched (modprobe needs depmod first).
	ModuleDep bool     `json:"module_dep,omitempty"`
	Loadable  []string `json:"loadable,omitempty"`
	Files     []string `json:"module_files,omitempty"`
	// BuiltinRead: ModuleDir's modules.builtin was read; Builtin are the
	// tcp_* and sch_* objects it lists (built into the kernel).
	BuiltinRead bool     `json:"builtin_read,omitempty"`
	Builtin     []string `json:"builtin,omitempty"`
	// Config holds the CONFIG_MODULES, CONFIG_TCP_CONG_* and
	// CONFIG_NET_SCH_* options set to y or m in the kernel's configuration
	// (an option not in it is not set), from ConfigSource (/proc/config.gz
	// or /boot/config-RELEASE); nil when no configuration was read whole.
	Config       map[string]string `json:"config,omitempty"`
	ConfigSource string            `json:"config_source,omitempty"`
}

// ModuleSupport is whether a kernel loads modules.
type ModuleSupport string

// ModuleSupport values.
const (
	ModulesUnknown  ModuleSupport = ""
	ModulesYes      ModuleSupport = "yes"      // /proc/modules exists and kernel.modules_disabled is 0
	ModulesNone     ModuleSupport = "none"     // no /proc/modules: built without CONFIG_MODULES
	ModulesDisabled ModuleSupport = "disabled" // kernel.modules_disabled = 1: loading is switched off until reboot
)

// NetNS values.
const (
	NetNSSameAsInit = "same-as-pid1"
	NetNSOther      = "other-than-pid1"
)

// Dir is one directory kaudit may write in.
type Dir struct {
	Exists bool   `json:"exists"`
	Mode   string `json:"mode,omitempty"` // ls -l permission string, "drwxr-xr-x"
	// Writable: test -w said yes for the login user (true for root on a
	// writable mount, whatever the mode).
	Writable bool `json:"writable"`
	// Mount is the mount point the directory is on (longest prefix in
	// /proc/mounts), FSType its type ("overlay", "ext4"), ReadOnly its
	// "ro" option.
	Mount    string `json:"mount,omitempty"`
	FSType   string `json:"fstype,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// ID is the node id the directory belongs to: node.id (KRaft), else
// broker.id (ZooKeeper mode); -1 when it names neither.
func (m *MetaProperties) ID() int {
	if m.NodeID >= 0 {
		return m.NodeID
	}
	return m.BrokerID
}

// RunningConfig is a setting as the running broker reports it, and its
// source: static (server.properties or --override), dynamic,
// dynamic-default, default (Kafka's built-in).
type RunningConfig struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}
