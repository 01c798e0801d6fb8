package simhost

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/rules"
)

func sysctls(over map[string]string) map[string]string {
	m := map[string]string{
		"net.core.somaxconn":               "128",
		"net.ipv4.tcp_max_syn_backlog":     "1024",
		"net.ipv4.tcp_syncookies":          "1",
		"net.ipv4.tcp_timestamps":          "1",
		"net.ipv4.tcp_window_scaling":      "1",
		"net.core.rmem_default":            "212992",
		"net.core.wmem_default":            "212992",
		"net.core.rmem_max":                "212992",
		"net.core.wmem_max":                "212992",
		"net.ipv4.tcp_rmem":                "4096 87380 6291456",
		"net.ipv4.tcp_wmem":                "4096 16384 4194304",
		"net.ipv4.tcp_congestion_control":  "cubic",
		"net.core.default_qdisc":           "pfifo_fast",
		"net.ipv4.tcp_tw_reuse":            "0",
		"net.ipv4.tcp_fin_timeout":         "60",
		"vm.max_map_count":                 "262144",
		"vm.zone_reclaim_mode":             "0",
		"kernel.numa_balancing":            "1",
		"net.netfilter.nf_conntrack_count": "5210",
		"net.netfilter.nf_conntrack_max":   "262144",
		"net.core.netdev_max_backlog":      "1000",
		"vm.swappiness":                    "60",
		"vm.dirty_background_ratio":        "10",
		"vm.dirty_ratio":                   "20",
		"vm.dirty_background_bytes":        "0",
		"vm.dirty_bytes":                   "0",
	}
	for k, v := range over {
		m[k] = v
	}
	return m
}

// tunedChoices are the demo's tuned values that the catalog's checks do
// not set: the fields no check judges (tcp_wmem's middle one) and a value
// kept above its minimum (vm.dirty_ratio); tuned brings everything else
// to the catalog's targets under the default profile.
var tunedChoices = map[string]string{
	"net.ipv4.tcp_wmem": "4096 87380 4194304",
	"vm.dirty_ratio":    "80",
}

// tuned is a host tuned as the catalog asks (rules.Tuned), with the
// tuning guide's profile (rules/profile.default.yaml).
var tuned = rules.Tuned(sysctls(tunedChoices), rules.DefaultProfile())

// TunedSysctls are the sysctls of the demo's tuned hosts (checked against
// the rule catalog by pipeline's TestDemoTunedHostMeetsTheCatalog).
func TunedSysctls() map[string]string { return sysctls(tuned) }

func tunedFile(path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@file %s\n", path)
	n := 3
	for _, k := range []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.core.rmem_default", "net.core.wmem_default", "net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control", "net.core.default_qdisc", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "net.core.netdev_max_backlog", "vm.swappiness", "vm.dirty_background_ratio", "vm.dirty_ratio"} {
		fmt.Fprintf(&b, "%d:%s = %s\n", n, k, tuned[k])
		n++
	}
	return b.String()
}

// withProc sets k's broker-process section.
func withProc(k *Kafka, p Proc) *Kafka {
	k.Process = p.Body(k.PID)
	return k
}

// The log-dirs sections of the demo's hosts that do not use LogDirsXFS.
const (
	logDirsOnRoot = "dir=/var/lib/kafka\nreal=/var/lib/kafka\nsegments=2210\n" +
		"mi=39 0 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/rootvg-lvlocroot rw,attr2,inode64,noquota\n"
	logDirsTmpfs = "dir=/tmp/kafka-logs\nreal=/tmp/kafka-logs\nsegments=312\n" +
		"mi=26 1 8:1 / / rw,relatime - ext4 /dev/vda1 rw,errors=remount-ro\n" +
		"mi=29 26 0:26 / /tmp rw,nosuid,nodev shared:12 - tmpfs tmpfs rw,size=4015568k,nr_inodes=1048576\n"
)

func withLogDirs(k *Kafka, body string) *Kafka {
	k.LogDirs = body
	return k
}

func apacheKafka(pid int, version, config string, conf ...string) *Kafka {
	body := ""
	for i, c := range conf {
		body += fmt.Sprintf("%d:%s\n", 20+i*3, c)
	}
	return &Kafka{
		PID: pid, FoundBy: "listener", Main: "kafka.Kafka", Config: config,
		Classpath: []string{
			"/opt/kafka/bin/../libs/kafka-clients-" + version + ".jar",
			"/opt/kafka/bin/../libs/kafka_2.13-" + version + ".jar",
		},
		ConfigBody: body,
	}
}

const (
	osCentOS7  = "NAME=\"CentOS Linux\"\nVERSION=\"7 (Core)\"\nID=\"centos\"\nID_LIKE=\"rhel fedora\"\nVERSION_ID=\"7\"\nPRETTY_NAME=\"CentOS Linux 7 (Core)\"\nANSI_COLOR=\"0;31\"\nCPE_NAME=\"cpe:/o:centos:centos:7\"\nHOME_URL=\"https://www.centos.org/\"\n"
	osUbuntu20 = "NAME=\"Ubuntu\"\nVERSION=\"20.04.6 LTS (Focal Fossa)\"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME=\"Ubuntu 20.04.6 LTS\"\nVERSION_ID=\"20.04\"\nVERSION_CODENAME=focal\nUBUNTU_CODENAME=focal\n"
	osUbuntu18 = "NAME=\"Ubuntu\"\nVERSION=\"18.04.6 LTS (Bionic Beaver)\"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME=\"Ubuntu 18.04.6 LTS\"\nVERSION_ID=\"18.04\"\nVERSION_CODENAME=bionic\nUBUNTU_CODENAME=bionic\n"
	osDebian12 = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n"
	osDebian10 = "PRETTY_NAME=\"Debian GNU/Linux 10 (buster)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"10\"\nVERSION=\"10 (buster)\"\nVERSION_CODENAME=buster\nID=debian\n"
	osRHEL8    = "NAME=\"Red Hat Enterprise Linux\"\nVERSION=\"8.8 (Ootpa)\"\nID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"8.8\"\nPLATFORM_ID=\"platform:el8\"\nPRETTY_NAME=\"Red Hat Enterprise Linux 8.8 (Ootpa)\"\n"
	osAmzn2    = "NAME=\"Amazon Linux\"\nVERSION=\"2\"\nID=\"amzn\"\nID_LIKE=\"centos rhel fedora\"\nVERSION_ID=\"2\"\nPRETTY_NAME=\"Amazon Linux 2\"\n"
)

// eth is a host's eth0: its driver, ring sizes as ethtool -g prints them
// (netlink or ioctl wording) and GRO on or off.
func eth(drv string, netlink bool, rxMax, txMax, rx, tx int, gro string) NIC {
	ring := RingIoctl("eth0", rxMax, txMax, rx, tx)
	if netlink {
		ring = RingNetlink("eth0", rxMax, txMax, rx, tx)
	}
	// Provisioned: a udev rule sets at boot what runs.
	const rule = `@udev-rule /etc/udev/rules.d/70-nic-tuning.rules:%d ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth0", RUN+="/usr/sbin/ethtool %s"` + "\n"
	persist := "@mac 52:54:00:00:00:01\n@udev-version 252\n" +
		fmt.Sprintf(rule, 1, "-K %k tso on gso on gro "+gro) + fmt.Sprintf(rule, 2, fmt.Sprintf("-G %%k rx %d tx %d", rx, tx))
	return NIC{Name: "eth0", Driver: drv, Ring: ring, Features: Features("eth0", "on", "on", gro), Persist: persist}
}

func withMTU(n NIC, mtu int) NIC {
	n.MTU = mtu
	return n
}

// DemoFleet is the embedded default fleet: the failure of the talk and its
// neighbours, one host per interesting combination. A data table: a fresh
// copy per call, so callers may change their hosts.
func DemoFleet() []*Host {
	return []*Host{
		{ // The talk's host: old kernel, cookies firing, Kafka 2.8.1, backlog 50.
			Name: "kafka-centos7-01", Release: "3.10.0-1160.95.1.el7.x86_64",
			Version:     "Linux version 3.10.0-1160.95.1.el7.x86_64 (mockbuild@kbuilder.bsys.centos.org) (gcc version 4.8.5 20150623 (Red Hat 4.8.5-44) (GCC) ) #1 SMP Mon Jul 24 13:59:37 UTC 2023",
			OSRelease:   osCentOS7,
			Sysctl:      sysctls(map[string]string{"vm.zone_reclaim_mode": "1"}),
			NUMANodes:   2,
			TimeSync:    NTPUnsynced,
			Files:       map[string]string{"/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never", "/sys/kernel/mm/transparent_hugepage/defrag": "[always] defer defer+madvise madvise never"},
			SysctlFiles: "@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /usr/lib/sysctl.d/00-system.conf\n5:net.bridge.bridge-nf-call-ip6tables = 0\n@file /usr/lib/sysctl.d/50-default.conf\n11:kernel.sysrq = 16\n@file /etc/sysctl.conf\n",
			Changelog:   "source=rpm -q --changelog kernel-3.10.0-1160.95.1.el7.x86_64\n",
			Netstat:     Netstat(true, map[string]int64{"SyncookiesSent": 18432, "SyncookiesRecv": 17980, "ListenOverflows": 412, "ListenDrops": 412, "TCPReqQFullDoCookies": 18432}),
			SS:          SS(true, Listen{Addr: "*", Port: 22, Backlog: 128}, Listen{Addr: "[::]", Port: 9092, Backlog: 50, PID: 2231, Proc: "java"}),
			Kafka:       withProc(apacheKafka(2231, "2.8.1", "/opt/kafka/config/server.properties", "listeners=PLAINTEXT://:9092", "socket.receive.buffer.bytes=102400"), Proc{Soft: 4096, Hard: 4096, FDs: 3900, Maps: 9000, MemKB: 16 << 20, Java: "1.8.0_392", Xms: "-Xms1g", Xmx: "-Xmx1g"}),
			NICs:        []NIC{eth("ixgbe", false, 4096, 4096, 512, 512, "on")},
			Dmesg:       "[1190231.128842] TCP: request_sock_TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters.\n",
			Established: "[::ffff:10.0.0.11]:9092 1600\n[fd00:10::11]:9092 240\n10.0.0.11:22 1\n",
			Conns:       talkBrokerConns,
		},
		{ // Ubuntu 20.04 on a fixed 5.4 ABI, but Kafka 2.8 still pins the backlog.
			Name: "kafka-focal-02", Release: "5.4.0-150-generic",
			Version:     "Linux version 5.4.0-150-generic (buildd@bos03-amd64-012) (gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.1)) #167-Ubuntu SMP Mon May 15 17:35:05 UTC 2023",
			Signature:   "Ubuntu 5.4.0-150.167-generic 5.4.233",
			OSRelease:   osUbuntu20,
			Sysctl:      sysctls(map[string]string{"net.core.somaxconn": "4096", "net.core.default_qdisc": "fq_codel"}),
			SysctlFiles: "@file /etc/sysctl.d/10-network-security.conf\n4:net.ipv4.conf.default.rp_filter=2\n@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n28:net.core.somaxconn=4096\n",
			Netstat:     Netstat(false, map[string]int64{"ListenOverflows": 3, "ListenDrops": 3}),
			SS:          SS(false, Listen{Addr: "0.0.0.0", Port: 22, Backlog: 4096}, Listen{Addr: "*", Port: 9092, Backlog: 50, PID: 1207, Proc: "java"}),
			Kafka:       withProc(apacheKafka(1207, "2.8.2", "/opt/kafka/config/server.properties", "listeners=PLAINTEXT://0.0.0.0:9092"), Proc{Soft: 100000, Hard: 100000, FDs: 2100, Maps: 5200, SwapKB: 51200, MemKB: 8 << 20, Java: "11.0.21", Xms: "-Xms6g", Xmx: "-Xmx6g"}),
			NICs:        []NIC{eth("ena", false, 16384, 1024, 1024, 1024, "on")},
			Established: "10.0.0.12:9092 35\n",
			Conns:       ssHeader + "0 0 10.0.0.12:9092 10.0.1.21:40110\n\t wscale:7,7\ntotal=35\n",
		},
		{ // The compliant one: Debian 12, Kafka 3.6.1 with a raised backlog, tuned and persisted.
			Name: "kafka-bookworm-03", Release: "6.1.0-13-amd64",
			Version:     "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)",
			OSRelease:   osDebian12,
			Sysctl:      sysctls(tuned),
			SysctlFiles: tunedFile("/etc/sysctl.d/60-kafka.conf") + "@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n",
			Netstat:     Netstat(false, nil),
			SS:          SS(false, Listen{Addr: "0.0.0.0", Port: 22, Backlog: 128}, Listen{Addr: "*", Port: 9092, Backlog: 4096, PID: 988, Proc: "java"}),
			Kafka:       apacheKafka(988, "3.6.1", "/opt/kafka/config/server.properties", "listeners=SASL_SSL://:9092", "socket.listen.backlog.size=4096", "socket.receive.buffer.bytes=-1"),
			RDNS:        "ptr self 10.0.0.13 10.0.0.13 0 5120.31 5120.31 10.0.0.13 kafka-bookworm-03.demo.example\nptr peer 10.0.0.17 10.0.0.17 0 5120.31 5120.32 10.0.0.17 kafka-buster-07.demo.example\n",
			NICs:        []NIC{eth("mlx5_core", true, 8192, 8192, 4096, 4096, "on")},
			Established: "[::ffff:10.0.0.13]:9092 2100\n",
		},
		{ // Confluent Platform 7.1 (= Apache 3.1) on RHEL 8: the release cannot settle it, the probe can.
			Name: "kafka-rhel8-04", Release: "4.18.0-477.27.1.el8_8.x86_64",
			Version:     "Linux version 4.18.0-477.27.1.el8_8.x86_64 (mockbuild@x86-vm-07.build.eng.bos.redhat.com) (gcc version 8.5.0 20210514 (Red Hat 8.5.0-18) (GCC)) #1 SMP Thu Aug 31 10:29:22 EDT 2023",
			OSRelease:   osRHEL8,
			Sysctl:      sysctls(map[string]string{"net.core.somaxconn": "1024", "net.core.default_qdisc": "fq_codel"}),
			SysctlFiles: "@file /etc/sysctl.d/90-kafka.conf\n2:net.core.somaxconn = 1024\n@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n",
			Netstat:     Netstat(false, map[string]int64{"SyncookiesSent": 96, "TCPReqQFullDoCookies": 96}),
			SS:          SS(false, Listen{Addr: "0.0.0.0", Port: 22, Backlog: 128}, Listen{Addr: "*", Port: 9092, Backlog: 50, PID: 4410, Proc: "java"}),
			Kafka: &Kafka{PID: 4410, FoundBy: "listener", Main: "kafka.Kafka", Config: "/etc/kafka/server.properties",
				Classpath:  []string{"/usr/bin/../share/java/kafka/kafka-clients-7.1.0-ccs.jar", "/usr/bin/../share/java/kafka/kafka_2.13-7.1.0-ccs.jar"},
				ConfigBody: "31:listeners=PLAINTEXT://0.0.0.0:9092\n",
				LogDirs:    logDirsOnRoot}, // on the OS disk, relatime
			NICs:        []NIC{withMTU(eth("virtio_net", true, 256, 256, 256, 256, "on"), 9000)}, // jumbo frames where its peers have 1500
			Files:       map[string]string{"/sys/devices/system/clocksource/clocksource0/current_clocksource": "hpet"},
			Probe:       &ProbeAnswer{Client: 1, Server: 7, Python: "3.6.8 /usr/libexec/platform-python"}, // the probe settles it: the talk's bug
			Established: "10.0.0.14:9092 64\n",
		},
		{ // Ubuntu 18.04: the 4.15 signature never changes; only the probe settles it.
			Name: "kafka-bionic-05", Release: "4.15.0-213-generic",
			Version:     "Linux version 4.15.0-213-generic (buildd@lcy02-amd64-079) (gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)) #224-Ubuntu SMP Mon Jun 19 13:30:12 UTC 2023",
			Signature:   "Ubuntu 4.15.0-213.224-generic 4.15.18",
			OSRelease:   osUbuntu18,
			Sysctl:      sysctls(map[string]string{"net.core.somaxconn": "1024"}),
			SysctlFiles: "@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n60:net.core.somaxconn=1024\n",
			Netstat:     Netstat(false, nil),
			SS:          SS(false, Listen{Addr: "*", Port: 9092, Backlog: 1024, PID: 3120, Proc: "java"}),
			Kafka:       withProc(apacheKafka(3120, "3.4.0", "/opt/kafka/config/server.properties", "socket.listen.backlog.size=1024", "socket.receive.buffer.bytes=1048576"), Proc{Soft: 128000, Hard: 128000, FDs: -1, Maps: -1, MemKB: 32 << 20, Java: "11.0.21", Xms: "-Xms6g", Xmx: "-Xmx6g"}), // receive buffer above rmem_max: clamped
			NICs:        []NIC{eth("ixgbe", false, 4096, 4096, 4096, 4096, "off")},
			Probe:       &ProbeAnswer{Client: 1, Server: 1, Python: "3.6.9 /usr/bin/python3"}, // and the probe finds it consistent
			Established: "10.0.0.15:9092 300\n",
		},
		{ // Amazon Linux 2 on an affected 4.14, mitigated with tcp_syncookies=0.
			Name: "kafka-amzn2-06", Release: "4.14.203-156.332.amzn2.x86_64",
			Version:     "Linux version 4.14.203-156.332.amzn2.x86_64 (mockbuild@ip-10-0-1-32) (gcc version 7.3.1 20180712 (Red Hat 7.3.1-10) (GCC)) #1 SMP Fri Oct 30 19:19:33 UTC 2020",
			OSRelease:   osAmzn2,
			Sysctl:      sysctls(map[string]string{"net.ipv4.tcp_syncookies": "0", "net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "8192", "net.netfilter.nf_conntrack_count": "59000", "net.netfilter.nf_conntrack_max": "65536"}),
			SysctlFiles: "@file /etc/sysctl.d/50-kafka.conf\n1:net.ipv4.tcp_syncookies = 0\n2:net.core.somaxconn = 4096\n3:net.ipv4.tcp_max_syn_backlog = 8192\n@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n",
			Netstat:     Netstat(false, map[string]int64{"TCPReqQFullDrop": 12, "ListenDrops": 12}),
			SS:          SS(false, Listen{Addr: "*", Port: 9092, Backlog: 4096, PID: 2001, Proc: "java"}),
			Kafka:       withCgroup(withProc(apacheKafka(2001, "3.3.2", "/opt/kafka/config/server.properties", "socket.listen.backlog.size=8192", "socket.receive.buffer.bytes=-1"), Proc{Soft: 100000, Hard: 100000, FDs: 86000, Maps: 7000, MemKB: 64 << 20, Java: "17.0.9", Xms: "-Xms1g", Xmx: "-Xmx6g"}), CgroupMemoryMax(8<<30)), // MemoryMax=8G for a 6g heap
			NICs:        []NIC{eth("ena", false, 16384, 1024, 8192, 1024, "on")},
			Established: "10.0.0.16:9092 5000\n",
			Conntrack:   ConntrackStat("0000002a"), // the nearly full table already evicted entries
		},
		{ // Debian 10 on an affected 4.19 sublevel, somaxconn raised by hand and not persisted.
			Name: "kafka-buster-07", Release: "4.19.0-12-amd64",
			Version:     "Linux version 4.19.0-12-amd64 (debian-kernel@lists.debian.org) (gcc version 8.3.0 (Debian 8.3.0-6)) #1 SMP Debian 4.19.152-1 (2020-10-18)",
			OSRelease:   osDebian10,
			Sysctl:      sysctls(map[string]string{"net.core.somaxconn": "4096"}),
			SysctlFiles: "@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n",
			Netstat:     Netstat(false, map[string]int64{"SyncookiesSent": 7, "TCPReqQFullDoCookies": 7}),
			SS:          SS(false, Listen{Addr: "*", Port: 9092, Backlog: 2048, PID: 777, Proc: "java"}),
			Kafka:       withProc(withLogDirs(apacheKafka(777, "3.2.3", "/opt/kafka/config/server.properties", "socket.listen.backlog.size=2048", "listeners=SASL_PLAINTEXT://:9092"), logDirsTmpfs), Proc{Soft: 100000, Hard: 100000, FDs: 1900, Maps: 4800, MemKB: 32 << 20, Java: "1.8.0_392", Xms: "-Xms6g", Xmx: "-Xmx6g"}), // Kafka's default /tmp/kafka-logs, /tmp a tmpfs
			NICs:        []NIC{eth("virtio_net", true, 1024, 1024, 256, 256, "on")},
			Established: "10.0.0.17:9092 800\n",
			RDNS:        "ptr self 10.0.0.17 10.0.0.17 0 7310.02 7310.03 10.0.0.17 kafka-buster-07.demo.example\nptr peer 10.0.0.13 10.0.0.13 0 7310.03 7310.03 10.0.0.13 kafka-bookworm-03.demo.example\nptr peer 10.0.0.14 10.0.0.14 124 7310.03 7312.04 \n", // a peer's PTR lookup never answers (the resolver's first server is gone)
		},
		{ // Confluent Platform 7.1.7 has socket.listen.backlog.size backported (confluentinc/kafka tag v7.1.7): one line of server.properties, no upgrade.
			Name: "kafka-cp717-09", Release: "6.1.0-13-amd64",
			Version:     "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)",
			OSRelease:   osDebian12,
			Sysctl:      sysctls(tuned),
			SysctlFiles: tunedFile("/etc/sysctl.d/60-kafka.conf") + "@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf\n@file /etc/sysctl.conf\n",
			Netstat:     Netstat(false, nil),
			SS:          SS(false, Listen{Addr: "0.0.0.0", Port: 22, Backlog: 128}, Listen{Addr: "*", Port: 9092, Backlog: 50, PID: 5120, Proc: "java"}),
			Kafka: &Kafka{PID: 5120, FoundBy: "listener", Main: "kafka.Kafka", Config: "/etc/kafka/server.properties",
				Classpath:  []string{"/usr/bin/../share/java/kafka/kafka-clients-7.1.7-ccs.jar", "/usr/bin/../share/java/kafka/kafka_2.13-7.1.7-ccs.jar"},
				ConfigBody: "31:listeners=PLAINTEXT://0.0.0.0:9092\n"},
			NICs:        []NIC{eth("mlx5_core", true, 8192, 8192, 4096, 4096, "on")},
			Established: "10.0.0.19:9092 900\n",
		},
		{ // A producer host (inventory group clients): its side of the connections to the brokers.
			Name: "producer-10", Release: "6.1.0-13-amd64", Client: true, Groups: []string{"clients"},
			Version:   "Linux version 6.1.0-13-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.55-1 (2023-09-29)",
			OSRelease: osDebian12,
			Sysctl:    sysctls(tuned),
			Conns:     producerConns,
		},
	}
}

// ssHeader is ss -tin's header, as conns.awk keeps it.
const ssHeader = "Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"

// talkBrokerConns is the talk's broker side (conns.awk's bounded form):
// with SO_RCVBUF 102400 it advertises wscale 1; the cookie connection from
// 10.0.1.21:51234 uses 7 (the talk's capture, Linux commit 909172a).
const talkBrokerConns = ssHeader +
	"0 0 [::ffff:10.0.0.11]:9092 [::ffff:10.0.1.21]:51230\n\t wscale:7,1\n" +
	"0 0 [::ffff:10.0.0.11]:9092 [::ffff:10.0.1.21]:51232\n\t wscale:7,1\n" +
	"0 0 [::ffff:10.0.0.11]:9092 [::ffff:10.0.1.21]:51234\n\t wscale:7,7\n" +
	"0 0 [::ffff:10.0.0.11]:9092 [::ffff:10.0.3.7]:33010\n\t wscale:7,1\n" +
	"total=1840\n"

// producerConns is producer-10's side: four connections to the talk's
// broker (one beyond the broker's bounded list), one to kafka-focal-02 and
// one to a virtual IP no broker has.
const producerConns = ssHeader +
	"0 0 10.0.1.21:51230 10.0.0.11:9092\n\t wscale:1,7\n" +
	"0 0 10.0.1.21:51232 10.0.0.11:9092\n\t wscale:1,7\n" +
	"0 0 10.0.1.21:51234 10.0.0.11:9092\n\t wscale:1,7\n" +
	"0 0 10.0.1.21:51236 10.0.0.11:9092\n\t wscale:1,7\n" +
	"0 0 10.0.1.21:40110 10.0.0.12:9092\n\t wscale:7,7\n" +
	"0 0 10.0.1.21:40500 10.0.0.100:9092\n\t wscale:7,7\n" +
	"total=6\n"
