package simhost

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// Host is the canned state of one simulated broker host: raw command
// output, exactly as the real tools print it.
type Host struct {
	Name      string
	Release   string // /proc/sys/kernel/osrelease
	Version   string // /proc/version
	Signature string // /proc/version_signature (Ubuntu), "" if absent
	BootID    string // /proc/sys/kernel/random/boot_id, "" if absent
	OSRelease string // /etc/os-release
	Sysctl    map[string]string
	// SysctlFiles is the sysctl-files section body (@file/@link + N:line).
	SysctlFiles string
	Changelog   string // kernel-changelog body ("" = absent)
	Netstat     string // /proc/net/netstat
	SS          string // listeners section: ss -ltnp's header and LISTEN rows; "" = ss missing
	Kafka       *Kafka
	NICs        []NIC
	Dmesg       string // matching dmesg lines
	Fault       Fault
	// Sections overrides a section's state ("denied", "missing", …).
	Sections map[string]string
	// Established is the established section (sockets.awk's
	// "ADDRESS:PORT COUNT" lines); Conns the conns section (sockets.awk's
	// bounded ss -tin, ending in "total=N"; "" renders "total=0").
	Established string
	Conns       string
	// Client: a producer host, gathered with the client profile (kernel,
	// sysctls, conns); Groups its inventory groups (default "demo").
	Client bool
	Groups []string
	// Files overrides the /proc and /sys files the host section answers
	// (DefaultFiles otherwise; a path in neither is absent); NUMANodes is
	// its node count (0: 1); ClockSkew how far its clock is off.
	Files     map[string]string
	NUMANodes int
	ClockSkew time.Duration
	// TimeSync, Conntrack and RDNS are the bodies of the timesync,
	// conntrack-stat and rdns sections (hostsvc.go; "": the defaults,
	// rdns only with a SASL listener in Kafka.ConfigBody).
	TimeSync, Conntrack, RDNS string
	// Probe is how the kernel answers kaudit's SYN-cookie probe (nil: the
	// login has no root, the probe is skipped); see probe.go.
	Probe *ProbeAnswer
}

// Kafka is the broker process as the script would see it.
type Kafka struct {
	PID        int
	FoundBy    string   // listener | cmdline
	Classpath  []string // kafka* jars only, as the script filters them
	Main       string
	Config     string
	Overrides  []string
	ConfigBody string // "N:key=value" lines of the keys kaudit reads
	// Process is the broker-process section's body (see Proc); "" is a
	// healthy broker process.
	Process string
	// LogDirs is the log-dirs section body (dir=, real=, segments=, mi=
	// lines); "" is a dedicated XFS disk mounted noatime (LogDirsXFS).
	LogDirs string
	// Cgroup is the broker-cgroup section body; "" is a systemd unit
	// without a memory limit (CgroupNoLimit). Devices is the log-devices
	// section body; "" is the devices under the log-dirs mounts
	// (devicesFor).
	Cgroup, Devices string
}

// Proc is a broker-process section body: the open-files limit, the
// descriptors and maps in use (-1: denied to the login), VmSwap and
// MemTotal in kB, the java's JAVA_VERSION and the -Xms/-Xmx flags ("" for
// none).
type Proc struct {
	Soft, Hard, FDs, Maps int
	SwapKB, MemKB         int64
	Java, Xms, Xmx        string
}

// Body renders p as the gather prints it, for the broker with pid.
func (p Proc) Body(pid int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "limits Max open files            %-20d %-20d files     \n", p.Soft, p.Hard)
	fmt.Fprintf(&b, "status VmSwap:\t%8d kB\nmeminfo MemTotal:       %d kB\n", p.SwapKB, p.MemKB)
	exe := "proc"
	for _, c := range []struct {
		tag string
		n   int
	}{{"fds", p.FDs}, {"maps", p.Maps}} {
		if c.n < 0 {
			fmt.Fprintf(&b, "%s !denied /proc/%d/%s\n", c.tag, pid, c.tag)
			exe = "cmdline"
		} else {
			fmt.Fprintf(&b, "%s %d\n", c.tag, c.n)
		}
	}
	home := "/usr/lib/jvm/java-" + strings.SplitN(strings.TrimPrefix(p.Java, "1."), ".", 2)[0] + "-openjdk-amd64"
	fmt.Fprintf(&b, "exe %s %s/bin/java\nrelease JAVA_VERSION=\"%s\"\n", exe, home, p.Java)
	for _, f := range []string{p.Xms, p.Xmx} {
		if f != "" {
			fmt.Fprintf(&b, "heap %s\n", f)
		}
	}
	return b.String()
}

// healthyProc is the broker process of a demo host that sets none.
var healthyProc = Proc{Soft: 100000, Hard: 100000, FDs: 2400, Maps: 6100, MemKB: 32 << 20, Java: "17.0.9", Xms: "-Xms6g", Xmx: "-Xmx6g"}

// LogDirsXFS is a log directory on its own XFS disk, mounted noatime.
const LogDirsXFS = "dir=/var/lib/kafka/data\nreal=/var/lib/kafka/data\nsegments=1840\n" +
	"mi=26 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/rootvg-root rw,attr2,inode64,noquota\n" +
	"mi=61 26 259:1 / /var/lib/kafka rw,noatime shared:30 - xfs /dev/nvme1n1 rw,attr2,inode64,logbufs=8,noquota\n"

// NIC is one interface's ethtool output.
type NIC struct {
	Name, Driver string
	MTU          int    // 0: 1500
	Ring         string // ethtool -g output (or its error text)
	Features     string // ethtool -k output, top-level lines
	// Persist: the persistence lines the gather prints after them
	// (npersist: "@mac …", "@udev-rule FILE:LINE RULE", …); "" none.
	Persist string
}

// Render produces the gather script's output for this host.
func (h *Host) Render(marker, sysctlKeys string) string { return h.RenderFiles(marker, sysctlKeys, "") }

// RenderFiles is Render for a script that names files (its FILES).
func (h *Host) RenderFiles(marker, sysctlKeys, files string) string {
	var b strings.Builder
	secs := h.sections(sysctlKeys)
	if !h.Client {
		last := secs[len(secs)-1]
		secs = append(append(secs[:len(secs)-1], section{"host", "ok", h.hostBody(files)}), h.hostSvcSections()...)
		secs = append(secs, last)
	}
	for _, sc := range secs {
		state, body := sc.state, sc.body
		if st, ok := h.Sections[sc.name]; ok {
			state = st
			if st != "ok" {
				body = ""
			}
		}
		fmt.Fprintf(&b, "%s begin %s\n", marker, sc.name)
		b.WriteString(ensureNL(body))
		fmt.Fprintf(&b, "\n%s end %s %s\n", marker, sc.name, state)
	}
	fmt.Fprintf(&b, "%s done\n", marker)
	return b.String()
}

// section is one section of the gather script's output, before the
// host's Sections overrides.
type section struct{ name, state, body string }

// sections are the host's sections in the gather script's order.
func (h *Host) sections(sysctlKeys string) []section {
	sig := ""
	if h.Signature != "" {
		sig = "signature=" + h.Signature + "\n"
	}
	conns := h.Conns
	if conns == "" {
		conns = "total=0\n"
	}
	out := []section{
		{"kernel", "ok", fmt.Sprintf("release=%s\nversion=%s\n%sarch=x86_64\n%s", h.Release, h.Version, sig, h.bootIDLine())},
		{"os-release", "ok", h.OSRelease},
		{"sysctl", "ok", h.sysctlBody(sysctlKeys)},
	}
	if h.Client {
		return append(out, section{"profile", "ok", "client\n"}, section{"conns", "ok", conns})
	}
	out = append(out, []section{
		{"sysctl-files", "ok", h.SysctlFiles},
		{"kernel-changelog", "ok", h.Changelog},
		{"netstat", "ok", h.Netstat},
		{"listeners", "ok", h.SS},
	}...)
	if h.Changelog == "" {
		out[4].state = "absent"
	}
	if h.SS == "" {
		out[6] = section{"listeners", "missing", "ss not found in PATH (install iproute2)"}
	}
	out = append(out, h.kafkaSections()...)
	if h.SS == "" {
		out = append(out, section{"established", "missing", ""}, section{"conns", "missing", ""})
	} else {
		out = append(out, section{"established", "ok", h.Established}, section{"conns", "ok", conns})
	}
	return append(out, section{"nics", "ok", h.nicsBody()}, section{"evidence", "ok", h.Dmesg})
}

func (h *Host) sysctlBody(keys string) string {
	var sb strings.Builder
	for _, k := range strings.Fields(keys) {
		if v, ok := h.Sysctl[k]; ok {
			fmt.Fprintf(&sb, "%s=%s \n", k, v)
		} else {
			fmt.Fprintf(&sb, "%s!absent\n", k)
		}
	}
	return sb.String()
}

func (h *Host) kafkaSections() []section {
	k := h.Kafka
	if k == nil {
		return []section{{"kafka", "absent", ""}, {"kafka-config", "absent", ""}, {"broker-process", "absent", ""}, {"log-dirs", "absent", ""},
			{"broker-cgroup", "absent", ""}, {"log-devices", "absent", ""}}
	}
	var kb strings.Builder
	fmt.Fprintf(&kb, "pid=%d\nfound=%s\n", k.PID, k.FoundBy)
	for _, c := range k.Classpath {
		fmt.Fprintf(&kb, "cp=%s\n", c)
	}
	fmt.Fprintf(&kb, "main=%s\n", k.Main)
	for _, o := range k.Overrides {
		fmt.Fprintf(&kb, "override=%s\n", o)
	}
	fmt.Fprintf(&kb, "arg=%s\n", k.Config)
	proc := k.Process
	if proc == "" {
		proc = healthyProc.Body(k.PID)
	}
	ld := k.LogDirs
	if ld == "" {
		ld = LogDirsXFS
	}
	return []section{{"kafka", "ok", kb.String()}, {"kafka-config", "ok", "path=" + k.Config + "\n" + k.ConfigBody}, {"broker-process", "ok", proc}, {"log-dirs", "ok", ld},
		{"broker-cgroup", "ok", cmp.Or(k.Cgroup, CgroupNoLimit)}, {"log-devices", "ok", cmp.Or(k.Devices, devicesFor(ld))}}
}

func (h *Host) nicsBody() string {
	var nb strings.Builder
	for _, n := range h.NICs {
		fmt.Fprintf(&nb, "@if %s\n", n.Name)
		if n.Driver != "" {
			fmt.Fprintf(&nb, "@driver %s\n", n.Driver)
		}
		fmt.Fprintf(&nb, "@ring\n%s", ensureNL(n.Ring))
		fmt.Fprintf(&nb, "@features\n%s", ensureNL(n.Features))
		nb.WriteString(ensureNL(n.Persist))
	}
	return nb.String()
}

// DefaultFiles are the /sys files a simulated host answers: THP madvise,
// the tsc clocksource.
var DefaultFiles = map[string]string{
	"/sys/kernel/mm/transparent_hugepage/enabled":                        "always [madvise] never",
	"/sys/kernel/mm/transparent_hugepage/defrag":                         "always defer defer+madvise [madvise] never",
	"/sys/devices/system/clocksource/clocksource0/current_clocksource":   "tsc",
	"/sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc hpet acpi_pm",
}

// hostBody is the host section as the script prints it.
func (h *Host) hostBody(files string) string {
	var b strings.Builder
	for _, f := range strings.Fields(files) {
		v, ok := h.Files[f]
		if !ok {
			v, ok = DefaultFiles[f]
		}
		if ok {
			fmt.Fprintf(&b, "file %s=%s\n", f, v)
		} else {
			fmt.Fprintf(&b, "file %s!absent\n", f)
		}
	}
	fmt.Fprintf(&b, "numa-nodes %d\n", max(h.NUMANodes, 1))
	for _, n := range h.NICs {
		fmt.Fprintf(&b, "mtu %s %d\n", n.Name, cmp.Or(n.MTU, 1500))
	}
	t := time.Now().Add(h.ClockSkew)
	fmt.Fprintf(&b, "clock %d.%09d\n", t.Unix(), t.Nanosecond())
	return b.String()
}

func ensureNL(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func (h *Host) bootIDLine() string {
	if h.BootID == "" {
		return ""
	}
	return "boot_id=" + h.BootID + "\n"
}
