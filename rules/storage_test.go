package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// limit sets the broker's cgroup to a v2 unit with memory.max n (and the
// slice above it with none).
func limit(n int64) func(f *facts.Facts) {
	return func(f *facts.Facts) {
		f.Kafka.Unit = &facts.BrokerUnit{Name: "kafka.service", SystemdRuns: true}
		f.Kafka.Cgroup.Limits = []facts.CgroupLimit{
			{Path: "/system.slice/kafka.service", File: "memory.max", Bytes: n},
			{Path: "/system.slice/kafka.service", File: "memory.high", Bytes: facts.Unlimited},
			{Path: "/system.slice", File: "memory.max", Bytes: facts.Unlimited},
			{Path: "/", File: "memory.max", Absent: true},
		}
	}
}

func TestCgroupMemoryRule(t *testing.T) {
	const gb = int64(1) << 30
	runRuleCases(t, "broker-cgroup-memory", []ruleCase{
		{name: "no limit", status: Pass, reason: "no memory limit"},
		{name: "no memory controller", mutate: func(f *facts.Facts) { f.Kafka.Cgroup = &facts.CgroupMemory{} }, status: Pass, reason: "no memory controller"},
		{name: "8g for a 6g heap", mutate: limit(8 * gb), status: Fail, reason: "memory.max of /system.slice/kafka.service is 8g, under 12g",
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "systemctl set-property kafka.service MemoryMax=12884901888") {
					t.Errorf("fix %q", fd.Fix.Manual)
				}
			}},
		{name: "a unit's cgroup where systemd does not run", mutate: func(f *facts.Facts) {
			limit(8 * gb)(f)
			f.Kafka.Unit.SystemdRuns = false
		}, status: Fail, reason: "under 12g",
			check: func(t *testing.T, fd Finding) {
				if strings.Contains(fd.Fix.Manual, "systemctl") {
					t.Errorf("systemctl named where systemd does not run: %q", fd.Fix.Manual)
				}
			}},
		{name: "12g for a 6g heap: the floor exactly", mutate: limit(12 * gb), status: Pass, reason: "room for the heap and 6g of page cache"},
		{name: "a slice's limit binds", mutate: func(f *facts.Facts) {
			limit(facts.Unlimited)(f)
			f.Kafka.Cgroup.Limits[2].Bytes = 7 * gb
		}, status: Fail, reason: "memory.max of /system.slice is 7g",
			check: func(t *testing.T, fd Finding) {
				if strings.Contains(fd.Fix.Manual, "set-property kafka.service") {
					t.Errorf("the unit named for a slice's limit: %q", fd.Fix.Manual)
				}
			}},
		{name: "memory.high below max binds", mutate: func(f *facts.Facts) {
			limit(64 * gb)(f)
			f.Kafka.Cgroup.Limits[1].Bytes = 10 * gb
		}, status: Fail, reason: "memory.high of /system.slice/kafka.service is 10g",
			check: func(t *testing.T, fd Finding) {
				if !strings.Contains(fd.Fix.Manual, "MemoryHigh=") {
					t.Errorf("fix %q", fd.Fix.Manual)
				}
			}},
		{name: "small heap, 1 GiB floor", mutate: func(f *facts.Facts) {
			limit(1536 << 20)(f)
			f.Kafka.Process.Xmx = 512 << 20
		}, status: Pass, reason: "1g of page cache"},
		{name: "small heap under the 1 GiB floor", mutate: func(f *facts.Facts) {
			limit(1400 << 20)(f)
			f.Kafka.Process.Xmx = 512 << 20
		}, status: Fail, reason: "under 2g"},
		{name: "v1 no-limit value", mutate: func(f *facts.Facts) {
			f.Kafka.Cgroup = &facts.CgroupMemory{Version: 1, Path: "/", Member: facts.MemberYes, Limits: []facts.CgroupLimit{{Path: "/", File: "memory.limit_in_bytes", Bytes: facts.Unlimited}}}
		}, status: Pass, reason: "no memory limit"},
		{name: "v1 limit names MemoryLimit", mutate: func(f *facts.Facts) {
			f.Kafka.Unit = &facts.BrokerUnit{Name: "kafka.service", SystemdRuns: true}
			f.Kafka.Cgroup = &facts.CgroupMemory{Version: 1, Path: "/system.slice/kafka.service", Member: facts.MemberYes, Limits: []facts.CgroupLimit{{Path: "/system.slice/kafka.service", File: "memory.limit_in_bytes", Bytes: 4 * gb}}}
		}, status: Fail, reason: "memory.limit_in_bytes", check: func(t *testing.T, fd Finding) {
			if !strings.Contains(fd.Fix.Manual, "MemoryLimit=") {
				t.Errorf("fix %q", fd.Fix.Manual)
			}
		}},
		{name: "heap unknown, large limit", mutate: func(f *facts.Facts) { limit(8 * gb)(f); f.Kafka.Process.Xmx = 0 }, status: Unknown, reason: "no -Xmx"},
		{name: "heap unknown, limit under 2 GiB", mutate: func(f *facts.Facts) { limit(gb)(f); f.Kafka.Process = nil }, status: Fail, reason: "under 2g"},
		{name: "limit denied", mutate: func(f *facts.Facts) {
			limit(8 * gb)(f)
			f.Kafka.Cgroup.Limits[0] = facts.CgroupLimit{Path: "/system.slice/kafka.service", File: "memory.max", Unread: "denied"}
		}, status: Unknown, reason: "not readable (denied)"},
		{name: "a container's view", mutate: func(f *facts.Facts) {
			f.Kafka.Cgroup = &facts.CgroupMemory{Version: 2, Path: "/kubepods/x", NoDir: true}
		}, status: Unknown, reason: "not a directory"},
		{name: "membership not proven", mutate: func(f *facts.Facts) { f.Kafka.Cgroup.Member = facts.MemberUnknown }, status: Unknown, reason: "not proven"},
		{name: "another cgroup namespace", mutate: func(f *facts.Facts) { f.Kafka.Cgroup.Member = facts.MemberNo }, status: Unknown, reason: "not in"},
		{name: "not gathered", mutate: func(f *facts.Facts) {
			f.Kafka.Cgroup = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecCgroup: {State: facts.SectionDenied, Message: "!denied /proc/1234/cgroup"}}
		}, status: Unknown, reason: "denied /proc/1234/cgroup"},
		{name: "no broker", mutate: func(f *facts.Facts) { f.Kafka = nil }, status: Skip},
	})
}

// devices builds a log dir on dm-0 (an LV) over md0 (RAID1 of sdb1 and
// sdc1), with the disks' scheduler and rotational flag.
func devices(sched string, rot int) func(f *facts.Facts) {
	disk := func(n string) facts.BlockNode {
		return facts.BlockNode{Name: n, Kind: facts.BlockDisk, Scheduler: sched, ReadAheadKB: 128, Rotational: rot}
	}
	return func(f *facts.Facts) {
		f.Kafka.LogDirs[0].Device = "253:0"
		f.Kafka.Devices = &facts.BlockDevices{ByNumber: map[string]string{"253:0": "dm-0"}, Nodes: map[string]facts.BlockNode{
			"dm-0": {Name: "dm-0", Kind: facts.BlockDM, DMName: "vg0-kafka", Slaves: []string{"md0"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
			"md0":  {Name: "md0", Kind: facts.BlockMD, Slaves: []string{"sdb1", "sdc1"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
			"sdb1": {Name: "sdb1", Kind: facts.BlockPartition, Disk: "sdb", ReadAheadKB: -1, Rotational: -1},
			"sdc1": {Name: "sdc1", Kind: facts.BlockPartition, Disk: "sdc", ReadAheadKB: -1, Rotational: -1},
			"sdb":  disk("sdb"), "sdc": disk("sdc"),
		}}
	}
}

func TestLogDevicesRule(t *testing.T) {
	runRuleCases(t, "log-dir-devices", []ruleCase{
		{name: "nvme, none", status: Pass, reason: "fit for it", check: func(t *testing.T, fd Finding) {
			if fd.Observed != "/var/lib/kafka/data on nvme1n1 (read-ahead 128 KB): nvme1n1 non-rotational none read-ahead 128 KB" {
				t.Errorf("observed %q", fd.Observed)
			}
		}},
		{name: "LVM on md on spinning disks without a scheduler", mutate: devices("none", 1), status: Warn, reason: "rotational disk sdb, sdc", check: func(t *testing.T, fd Finding) {
			if !strings.Contains(fd.Observed, "dm-0 (vg0-kafka) (read-ahead 4096 KB): sdb rotational none") || fd.Fix == nil {
				t.Errorf("observed %q fix %+v", fd.Observed, fd.Fix)
			}
		}},
		{name: "LVM on md on spinning disks with mq-deadline", mutate: devices("mq-deadline", 1), status: Pass},
		{name: "flash with none under md", mutate: devices("none", 0), status: Pass},
		{name: "rotational not read", mutate: devices("none", -1), status: Unknown, reason: "not read"},
		{name: "a slave not followed (the walk's bound)", mutate: func(f *facts.Facts) {
			devices("none", 1)(f)
			delete(f.Kafka.Devices.Nodes, "sdc")
		}, status: Unknown, reason: "sdc was not followed"},
		{name: "a loop device: its file's disk not followed", mutate: func(f *facts.Facts) {
			f.Kafka.LogDirs[0].Device = "7:0"
			f.Kafka.Devices = &facts.BlockDevices{ByNumber: map[string]string{"7:0": "loop0"}, Nodes: map[string]facts.BlockNode{
				"loop0": {Name: "loop0", Kind: facts.BlockLoop, Scheduler: "none", ReadAheadKB: 128, Rotational: 1}}}
		}, status: Unknown, reason: "loop0: a loop device over a file"},
		{name: "tmpfs", mutate: func(f *facts.Facts) {
			f.Kafka.LogDirs[0].Device, f.Kafka.LogDirs[0].FSType = "0:45", "tmpfs"
			f.Kafka.Devices.ByNumber = map[string]string{"0:45": ""}
		}, status: Unknown, reason: "no block device number"},
		{name: "no /sys", mutate: func(f *facts.Facts) { f.Kafka.Devices = &facts.BlockDevices{NoSys: true} }, status: Unknown, reason: "/sys/dev/block is not there"},
		{name: "section absent", mutate: func(f *facts.Facts) {
			f.Kafka.Devices = nil
			f.Sections = map[string]facts.SectionStatus{facts.SecLogDevices: {State: facts.SectionAbsent}}
		}, status: Unknown, reason: "not gathered (absent)"},
		{name: "no broker", mutate: func(f *facts.Facts) { f.Kafka = nil }, status: Skip},
	})
}

func TestStoragePeerValues(t *testing.T) {
	f := compliantHost()
	devices("none", 1)(f)
	limit(16 << 30)(f)
	got := map[string]string{}
	for _, v := range append(cgroupPeerValues(f), devicePeerValues(f)...) {
		got[v.label] = v.value
	}
	want := map[string]string{
		"broker cgroup memory limit":                   "16g",
		"I/O scheduler of the disks under log dir 1":   "none",
		"rotational flag of the disks under log dir 1": "1",
		"read-ahead (KB) of the device of log dir 1":   "4096",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	f.Kafka.Devices.NoSys = true
	f.Kafka.Cgroup.NoDir = true
	if v := append(cgroupPeerValues(f), devicePeerValues(f)...); len(v) != 0 {
		t.Errorf("unknown facts compared: %v", v)
	}
}
