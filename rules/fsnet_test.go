package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// logDir replaces the compliant host's log directory with d.
func logDir(d ...facts.LogDir) func(f *facts.Facts) {
	return func(f *facts.Facts) { f.Kafka.LogDirs = d }
}

func onFS(fstype, source string, opts ...string) facts.LogDir {
	return facts.LogDir{Path: "/data/kafka", Exists: true, Mount: "/data", FSType: fstype, Source: source, Device: "0:50", Options: opts, Segments: 10}
}

func TestLogDirFilesystem(t *testing.T) {
	runRuleCases(t, RuleLogDirFilesystem, []ruleCase{
		{name: "xfs", status: Pass, reason: "XFS or ext4"},
		{name: "ext4", mutate: logDir(onFS("ext4", "/dev/sdb1", "rw")), status: Pass},
		{name: "tmpfs", mutate: logDir(onFS("tmpfs", "tmpfs", "rw")), status: Fail, reason: "lost at every reboot",
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "log.dirs") {
					t.Errorf("manual %q does not say to change log.dirs", fd.Fix.Manual)
				}
			}},
		{name: "nfs4", mutate: logDir(onFS("nfs4", "10.0.0.1:/export", "rw", "vers=4.1")), status: Fail, reason: "network filesystem"},
		{name: "cifs", mutate: logDir(onFS("cifs", "//nas/share", "rw")), status: Fail, reason: "network filesystem"},
		{name: "fuse subtype", mutate: logDir(onFS("fuse.sshfs", "u@h:/", "rw")), status: Fail, reason: "FUSE"},
		{name: "overlay warns", mutate: logDir(onFS("overlay", "overlay", "rw")), status: Warn, reason: "overlay"},
		{name: "btrfs warns", mutate: logDir(onFS("btrfs", "/dev/sda2", "rw")), status: Warn, reason: "btrfs"},
		{name: "one bad dir of two fails", mutate: func(f *facts.Facts) {
			f.Kafka.LogDirs = append(f.Kafka.LogDirs, onFS("tmpfs", "tmpfs"))
		}, status: Fail, reason: "/data/kafka is on tmpfs (memory)"},
		{name: "missing dir", mutate: logDir(facts.LogDir{Path: "/var/lib/kafka", Segments: -1}), status: Unknown, reason: "does not exist"},
		{name: "missing dir beside a good one is unknown", mutate: func(f *facts.Facts) {
			f.Kafka.LogDirs = append(f.Kafka.LogDirs, facts.LogDir{Path: "/gone", Segments: -1})
		}, status: Unknown, reason: "/gone"},
		{name: "not gathered", mutate: func(f *facts.Facts) {
			f.Kafka.LogDirs = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecLogDirs: {State: "denied", Message: "!denied /proc/self/mountinfo"}}
		}, status: Unknown, reason: "denied /proc/self/mountinfo"},
		{name: "no broker", mutate: func(f *facts.Facts) { f.Kafka = nil }, status: Skip},
	})
}

func TestLogDirNoatime(t *testing.T) {
	runRuleCases(t, RuleLogDirNoatime, []ruleCase{
		{name: "noatime", status: Pass},
		{name: "relatime warns", mutate: logDir(onFS("xfs", "/dev/sdb1", "rw", "relatime")), status: Warn, reason: "relatime",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix == nil || !strings.Contains(fd.Fix.Manual, "mount -o remount,noatime /data") || !strings.Contains(fd.Fix.Manual, "/etc/fstab") {
					t.Errorf("fix %+v lacks the fstab edit and the remount", fd.Fix)
				}
			}},
		{name: "no atime option is relatime", mutate: logDir(onFS("ext4", "/dev/sdb1", "rw")), status: Warn, reason: "relatime"},
		{name: "strictatime fails", mutate: logDir(onFS("ext4", "/dev/sdb1", "rw", "strictatime")), status: Fail, reason: "strictatime"},
		{name: "tmpfs is left to log-dir-filesystem", mutate: logDir(onFS("tmpfs", "tmpfs", "rw", "relatime")), status: Skip, reason: "not judged"},
		{name: "tmpfs beside a relatime disk", mutate: logDir(onFS("tmpfs", "tmpfs", "rw"), facts.LogDir{Path: "/d/k", Exists: true, Mount: "/d", FSType: "xfs", Source: "/dev/sdc", Device: "8:32", Options: []string{"rw", "relatime"}}), status: Warn, reason: "/d"},
		{name: "mount point with a space is quoted", mutate: logDir(facts.LogDir{Path: "/my data/k", Exists: true, Mount: "/my data", FSType: "xfs", Source: "/dev/sdb1", Device: "8:17", Options: []string{"rw", "relatime"}}), status: Warn,
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "mount -o remount,noatime '/my data'") {
					t.Errorf("manual %q does not quote the mount point", fd.Fix.Manual)
				}
			}},
		{name: "missing dir", mutate: logDir(facts.LogDir{Path: "/x", Segments: -1}), status: Unknown},
	})
}

func TestLogDirRootDevice(t *testing.T) {
	root := onFS("ext4", "/dev/vda", "rw")
	root.Mount, root.SameDeviceAsRoot = "/", true
	runRuleCases(t, RuleLogDirRootDevice, []ruleCase{
		{name: "own disk", status: Pass},
		{name: "on the root disk", mutate: logDir(root), status: Fail, reason: "same device as /"},
		{name: "missing dir", mutate: logDir(facts.LogDir{Path: "/x", Segments: -1}), status: Unknown},
	})
}

func kafkaProp(k, v string) func(f *facts.Facts) {
	return func(f *facts.Facts) { f.Kafka.Properties[k] = v }
}

func TestKafkaBufferCapped(t *testing.T) {
	runRuleCases(t, RuleKafkaBufferCapped, []ruleCase{
		{name: "defaults within the limits", mutate: func(f *facts.Facts) {
			delete(f.Kafka.Properties, "socket.receive.buffer.bytes")
			f.Sysctl["net.core.rmem_max"], f.Sysctl["net.core.wmem_max"] = "212992", "212992"
		}, status: Pass},
		{name: "receive above rmem_max", mutate: func(f *facts.Facts) {
			f.Kafka.Properties["socket.receive.buffer.bytes"] = "1048576"
			f.Sysctl["net.core.rmem_max"] = "212992"
		}, status: Fail, reason: "socket.receive.buffer.bytes=1048576 is above net.core.rmem_max=212992",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.Sysctl["net.core.rmem_max"] != "1048576" || fd.Fix.BoundOf("net.core.rmem_max").Dir != AtLeast || !fd.Fix.Restart {
					t.Errorf("fix %+v: want rmem_max at least 1048576 and a restart", fd.Fix)
				}
				if _, ok := fd.Fix.Sysctl["net.core.wmem_max"]; ok {
					t.Errorf("fix %+v raises wmem_max, which is not capped", fd.Fix)
				}
			}},
		{name: "send above wmem_max", mutate: func(f *facts.Facts) {
			f.Kafka.Properties["socket.send.buffer.bytes"] = "4194304"
			f.Sysctl["net.core.wmem_max"] = "212992"
		}, status: Fail, reason: "socket.send.buffer.bytes=4194304"},
		{name: "-1 is never capped", mutate: func(f *facts.Facts) {
			f.Kafka.Properties["socket.receive.buffer.bytes"] = "-1"
			f.Sysctl["net.core.rmem_max"] = "4096"
		}, status: Pass},
		{name: "not an integer", mutate: kafkaProp("socket.send.buffer.bytes", "big"), status: Unknown, reason: "not an integer"},
		{name: "rmem_max unreadable", mutate: func(f *facts.Facts) { delete(f.Sysctl, "net.core.rmem_max") }, status: Unknown, reason: "rmem_max"},
		{name: "config not read", mutate: func(f *facts.Facts) {
			f.Sections = map[string]facts.SectionStatus{facts.SecKafkaConf: {State: "denied"}}
		}, status: Unknown, reason: "server.properties"},
	})
}

func sysctls(kv ...string) func(f *facts.Facts) {
	return func(f *facts.Facts) {
		for i := 0; i+1 < len(kv); i += 2 {
			f.Sysctl[kv[i]] = kv[i+1]
		}
	}
}

func TestVMDirty(t *testing.T) {
	runRuleCases(t, RuleVMDirty, []ruleCase{
		{name: "cp-ansible values", mutate: sysctls("vm.dirty_background_ratio", "5", "vm.dirty_ratio", "80"), status: Pass},
		{name: "kernel defaults", mutate: sysctls("vm.dirty_background_ratio", "10", "vm.dirty_ratio", "20"), status: Fail, reason: "vm.dirty_background_ratio=10 (want <= 5)",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix.BoundOf("vm.dirty_background_ratio").Dir != AtMost || fd.Fix.BoundOf("vm.dirty_ratio").Dir != AtLeast {
					t.Errorf("bounds %v: background at most, dirty_ratio at least", fd.Fix.Bounds)
				}
			}},
		// Writing dirty_background_bytes makes the ratio read 0, which
		// would pass "at most 5": the bytes value must not pass.
		{name: "background bytes set is not a pass", mutate: sysctls("vm.dirty_background_ratio", "0", "vm.dirty_background_bytes", "67108864"), status: Unknown, reason: "vm.dirty_background_bytes=67108864 replaces vm.dirty_background_ratio"},
		{name: "dirty bytes set", mutate: sysctls("vm.dirty_ratio", "0", "vm.dirty_bytes", "268435456"), status: Unknown, reason: "vm.dirty_bytes=268435456"},
		{name: "bytes unreadable", mutate: func(f *facts.Facts) { delete(f.Sysctl, "vm.dirty_bytes") }, status: Unknown, reason: "may replace them"},
	})
}

func TestFsnetThresholdRules(t *testing.T) {
	runRuleCases(t, "vm-swappiness", []ruleCase{
		{name: "1", status: Pass},
		{name: "0 is at most 1", mutate: sysctls("vm.swappiness", "0"), status: Pass},
		{name: "default 60", mutate: sysctls("vm.swappiness", "60"), status: Fail, reason: "vm.swappiness=60 (want <= 1)"},
	})
	runRuleCases(t, "netdev-max-backlog", []ruleCase{
		{name: "default 1000", mutate: sysctls("net.core.netdev_max_backlog", "1000"), status: Fail, reason: "want >= 5000"},
	})
	runRuleCases(t, "tcp-tw-reuse", []ruleCase{
		{name: "loopback-only default", mutate: sysctls("net.ipv4.tcp_tw_reuse", "2"), status: Fail, reason: "client connections to the broker are not affected"},
		{name: "fin_timeout 60", mutate: sysctls("net.ipv4.tcp_fin_timeout", "60"), status: Fail, reason: "tcp_fin_timeout=60"},
	})
}

func TestTCPTimestampsWithCookies(t *testing.T) {
	runRuleCases(t, RuleTCPTimestamps, []ruleCase{
		{name: "on", status: Pass},
		{name: "off with cookies", mutate: sysctls("net.ipv4.tcp_timestamps", "0"), status: Fail, reason: "loses window scaling and SACK"},
		{name: "off without cookies is mitigated", mutate: sysctls("net.ipv4.tcp_timestamps", "0", "net.ipv4.tcp_syncookies", "0"), status: Warn, sev: Low, reason: "mitigated: tcp_syncookies=0"},
		{name: "off on a client fails whatever its cookies", mutate: func(f *facts.Facts) {
			sysctls("net.ipv4.tcp_timestamps", "0", "net.ipv4.tcp_syncookies", "0")(f)
			f.Role = facts.RoleClient
		}, status: Fail},
	})
}
