package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// compliantHost is a host on which every rule passes with the default
// profile. Its sysctls come from the catalog: each check's target (the
// first of one-of; in its field of the boot default for a field check),
// persisted in one file except those whose target is a literal the kernel
// boots with (tcp_timestamps, tcp_window_scaling).
func compliantHost() *facts.Facts {
	sys := map[string]string{
		"net.ipv4.tcp_syncookies":   "1",
		"vm.dirty_bytes":            "0",
		"vm.dirty_background_bytes": "0",
		KeyMaxMapCount:              "262144",
		KeyZoneReclaim:              "0",
		KeyNUMABalancing:            "1",
		KeyConntrackCount:           "1200",
		KeyConntrackMax:             "262144",
	}
	literal := map[string]bool{"net.ipv4.tcp_syncookies": true}
	p := DefaultProfile()
	for _, c := range shipped.checked() {
		sys[c.Key] = compliantValue(c, sys[c.Key], p)
		literal[c.Key] = c.Profile == "" && c.Boot.Value == sys[c.Key] // the kernel boots compliant
	}
	pers := map[string]facts.PersistedSysctl{}
	line := 1
	for _, k := range sortedKeys(sys) {
		if literal[k] {
			continue // kernel defaults
		}
		pers[k] = facts.PersistedSysctl{Value: sys[k], File: "/etc/sysctl.d/60-kafka.conf", Line: line}
		line++
	}
	f := &facts.Facts{
		KafkaPort: 9092,
		Kernel: facts.Kernel{Release: "6.1.0-13-amd64", Version: "Linux version 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)",
			Distro: "debian", DistroVer: "12"},
		Sysctl:    sys,
		Persisted: pers,
		Netstat: map[string]map[string]int64{"TcpExt": {
			"SyncookiesSent": 0, "SyncookiesRecv": 0, "SyncookiesFailed": 0, "ListenOverflows": 0,
			"ListenDrops": 0, "TCPReqQFullDoCookies": 0, "TCPReqQFullDrop": 0,
		}},
		Listeners: []facts.Listener{
			{Addr: "0.0.0.0", Port: 22, Backlog: 128},
			{Addr: "*", Port: 9092, Backlog: 4096},
		},
		Established: []facts.LocalConns{{Addr: "10.0.0.5", Port: 9092, Count: 1200}, {Addr: "10.0.0.5", Port: 22, Count: 2}},
		Conns:       []facts.Conn{},
		Kafka: &facts.Kafka{PID: 1234, FoundBy: "listener", Version: "3.6.1", Distribution: "apache",
			Jar: "/opt/kafka/libs/kafka_2.13-3.6.1.jar", Config: "/opt/kafka/config/server.properties",
			Properties:    map[string]string{"socket.listen.backlog.size": "4096", "socket.receive.buffer.bytes": "102400", "listeners": "PLAINTEXT://:9092"},
			PropertyLines: map[string]int{"socket.listen.backlog.size": 12, "socket.receive.buffer.bytes": 13, "listeners": 3},
			Process:       compliantProcess(),
		},
		NICs: []facts.NIC{{Name: "eth0", Driver: "mlx5_core",
			Ring:     &facts.Ring{RXMax: 8192, TXMax: 8192, RX: 4096, TX: 4096},
			Features: map[string]facts.Feature{"tso": {On: true}, "gso": {On: true}, "gro": {On: true}, "lro": {On: false, Fixed: true}},
			Boot:     compliantBoot(),
		}},
	}
	f.Files = map[string]string{FileTHPEnabled: "always [madvise] never", FileTHPDefrag: "always defer defer+madvise [madvise] never",
		FileClockCurrent: "tsc", FileClockAvailable: "tsc hpet acpi_pm"}
	f.Host = &facts.HostInfo{NUMANodes: 2, Clock: &facts.Clock{Measured: true, BoundSeconds: 1}}
	f.TimeSync = &facts.TimeSync{State: facts.Synced, Service: "chronyd", Source: "chronyc -n tracking", Detail: "Leap status: Normal"}
	f.ConntrackStat = &facts.ConntrackStat{CPUs: 8}
	f.Kafka.Properties[PropProtocolMap] = "CLIENT:SASL_SSL"
	f.Kafka.PropertyLines[PropProtocolMap] = 4
	f.Kafka.Properties["listeners"] = "CLIENT://:9092"
	f.ReverseDNS = &facts.ReverseDNS{Lookups: []facts.PTRLookup{
		{Addr: "10.0.0.5", IP: "10.0.0.5", Name: "broker-a.example.com", Stat: facts.PTRFound, Millis: 10},
		{Addr: "10.0.0.6", IP: "10.0.0.6", Peer: true, Name: "broker-b.example.com", Stat: facts.PTRFound, Millis: 20},
	}}
	f.Kafka.LogDirs = []facts.LogDir{{Path: "/var/lib/kafka/data", Exists: true, Mount: "/var/lib/kafka", FSType: "xfs",
		Source: "/dev/nvme1n1", Device: "259:1", Options: []string{"rw", "noatime", "rw", "attr2", "inode64"}, Segments: 1200}}
	f.Kafka.Cgroup = &facts.CgroupMemory{Version: 2, Path: "/system.slice/kafka.service", Member: facts.MemberYes, Limits: []facts.CgroupLimit{
		{Path: "/system.slice/kafka.service", File: "memory.max", Bytes: facts.Unlimited}, {Path: "/", File: "memory.max", Absent: true}}}
	f.Kafka.Devices = &facts.BlockDevices{ByNumber: map[string]string{"259:1": "nvme1n1"}, Nodes: map[string]facts.BlockNode{
		"nvme1n1": {Name: "nvme1n1", Kind: facts.BlockDisk, Scheduler: "none", ReadAheadKB: 128, Rotational: 0}}}
	return f
}

// compliantValue is a value of c's sysctl that meets c (cur: what other
// checks of the same key already chose).
func compliantValue(c SysctlCheck, cur string, p Profile) string {
	_, str, _ := c.target(p)
	if c.Field == 0 {
		return str
	}
	if cur == "" {
		cur = c.Boot.Value
	}
	f := strings.Fields(cur)
	for len(f) < c.Field {
		f = append(f, "4096")
	}
	f[c.Field-1] = str
	return strings.Join(f, " ")
}

func find(t *testing.T, fs []Finding, id string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Rule == id {
			return f
		}
	}
	t.Fatalf("no finding for %s", id)
	return Finding{}
}

// checkSeverity holds a finding to the catalog's severity: a fail carries
// it unless the case declares a departure (sev), which must then be one of
// those evaluate.go names (raised, warning, mitigated); a warn carries a
// named departure.
func checkSeverity(t *testing.T, fd Finding, declared Severity) {
	t.Helper()
	r, _ := Lookup(fd.Rule)
	c := &evalCtx{rule: r}
	named := fd.Severity == c.raised() || fd.Severity == c.warning() || fd.Severity == c.mitigated()
	switch {
	case fd.Status == Fail && fd.Severity != r.Severity && (declared == "" || !named):
		t.Errorf("%s fails at %s, the catalog says %s: a departure must be named in evaluate.go and declared by the case", fd.Rule, fd.Severity, r.Severity)
	case fd.Status == Fail && declared != "" && declared == r.Severity:
		t.Errorf("%s: the case restates the catalog's severity %s; leave sev out", fd.Rule, declared)
	case fd.Status == Warn && fd.Severity != r.Severity && !named:
		t.Errorf("%s warns at %s: neither the catalog's %s nor a named departure", fd.Rule, fd.Severity, r.Severity)
	}
}

type ruleCase struct {
	name    string
	mutate  func(f *facts.Facts)
	profile func(p *Profile)
	status  Status
	sev     Severity // "" = do not check
	reason  string   // substring
	check   func(t *testing.T, fd Finding)
}

func runRuleCases(t *testing.T, id string, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := compliantHost()
			if c.mutate != nil {
				c.mutate(f)
			}
			p := DefaultProfile()
			if c.profile != nil {
				c.profile(&p)
			}
			fd := find(t, Evaluate(f, p), id)
			if fd.Status != c.status || (c.sev != "" && fd.Severity != c.sev) || !strings.Contains(fd.Reason, c.reason) {
				t.Fatalf("%s: got %s/%s reason %q\nwant %s/%s with %q", id, fd.Status, fd.Severity, fd.Reason, c.status, c.sev, c.reason)
			}
			if fd.Reason == "" {
				t.Fatal("empty reason")
			}
			checkSeverity(t, fd, c.sev)
			if fd.Status == Fail && fd.Fix == nil {
				t.Fatal("failing finding without a fix")
			}
			if c.check != nil {
				c.check(t, fd)
			}
		})
	}
}

// compliantBoot is what a compliant host's kaudit .link sets at boot.
func compliantBoot() *facts.NICBoot {
	const l = "/etc/systemd/network/10-kaudit-eth0.link"
	return &facts.NICBoot{Settings: map[string]facts.NICBootValue{
		"rx": {Value: "4096", Mechanism: facts.PersistSystemdLink, Source: l + ":15"}, "tx": {Value: "4096", Mechanism: facts.PersistSystemdLink, Source: l + ":16"},
		"tso": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":17"}, "gso": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":18"},
		"gro": {Value: "on", Mechanism: facts.PersistSystemdLink, Source: l + ":14"},
	}}
}

// compliantProcess is a broker process every process rule passes.
func compliantProcess() *facts.BrokerProcess {
	return &facts.BrokerProcess{NoFile: &facts.Limit{Soft: 100000, Hard: 100000}, FDs: 1800, Maps: 4200, SwapKB: 0,
		MemTotalKB: 32 << 20, Exe: "/usr/lib/jvm/java-17-openjdk-amd64/bin/java", ExeFrom: "proc", JavaVersion: "17.0.9",
		Xms: 6 << 30, Xmx: 6 << 30}
}
