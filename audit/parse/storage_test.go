package parse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestCgroupMemory(t *testing.T) {
	const v1Max = facts.Unlimited
	for _, c := range []struct {
		file string
		want *facts.CgroupMemory
	}{
		{"broker-cgroup/v1-this-machine.txt", &facts.CgroupMemory{Version: 1, Path: "/process_api/cb5a0393e6663f775811c628b3a8f365", Member: facts.MemberYes, Limits: []facts.CgroupLimit{
			{Path: "/process_api/cb5a0393e6663f775811c628b3a8f365", File: "memory.limit_in_bytes", Bytes: v1Max},
			{Path: "/process_api", File: "memory.limit_in_bytes", Bytes: v1Max},
			{Path: "/", File: "memory.limit_in_bytes", Bytes: v1Max},
		}}},
		{"broker-cgroup/v2-systemd-memorymax-reconstructed.txt", &facts.CgroupMemory{Version: 2, Path: "/system.slice/kafka.service", Member: facts.MemberYes, Limits: []facts.CgroupLimit{
			{Path: "/system.slice/kafka.service", File: "memory.max", Bytes: 8 << 30},
			{Path: "/system.slice/kafka.service", File: "memory.high", Bytes: facts.Unlimited},
			{Path: "/system.slice", File: "memory.max", Bytes: facts.Unlimited},
			{Path: "/system.slice", File: "memory.high", Bytes: facts.Unlimited},
			{Path: "/", File: "memory.max", Absent: true},
			{Path: "/", File: "memory.high", Absent: true},
		}}},
		{"broker-cgroup/v2-container-nodir-reconstructed.txt", &facts.CgroupMemory{Version: 2, Path: "/kubepods.slice/kubepods-pod1.slice/cri-containerd-0123.scope", NoDir: true}},
		{"broker-cgroup/v2-denied-reconstructed.txt", &facts.CgroupMemory{Version: 2, Path: "/system.slice/kafka.service", Member: facts.MemberUnknown, Limits: []facts.CgroupLimit{
			{Path: "/system.slice/kafka.service", File: "memory.max", Unread: "denied"},
			{Path: "/system.slice/kafka.service", File: "memory.high", Unread: "denied"},
			{Path: "/system.slice", File: "memory.max", Absent: true},
			{Path: "/system.slice", File: "memory.high", Absent: true},
			{Path: "/", File: "memory.max", Absent: true},
			{Path: "/", File: "memory.high", Absent: true},
		}}},
		{"broker-cgroup/no-memory-controller-reconstructed.txt", &facts.CgroupMemory{}},
	} {
		got, err := CgroupMemory(readTestdata(t, c.file))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", c.file, got, err, c.want)
		}
	}
}

func TestCgroupMemoryStrict(t *testing.T) {
	for _, body := range []string{
		"",                                   // no version: not the section
		"version 3\n",                        // no such cgroup version
		"version 2\nmember maybe\n",          // a membership it does not know
		"version 2\nlimit memory.max 1g /\n", // not bytes: never guessed
		"version 2\nlimit memory.max -5 /\n",
		"version 1\nlimit memory.limit_in_bytes max /\n", // v1 has no "max"
		"version 2\nlimit memory.swap.max max /\n",       // a file kaudit does not read
		"version 2\nlimit memory.max 100\n",              // no path
		"version 2\nsomething else\n",
	} {
		got, err := CgroupMemory(body)
		if err == nil {
			// A bad value is kept as unread, never as a number.
			for _, l := range got.Limits {
				if l.Unread == "" {
					t.Errorf("%q: read as %+v", body, got)
				}
			}
		}
	}
	// A 64-bit overflow is v1's "no limit", not an error.
	got, err := CgroupMemory("version 1\nlimit memory.limit_in_bytes 99999999999999999999 /\n")
	if err != nil || got.Limits[0].Bytes != facts.Unlimited {
		t.Errorf("overflow: %+v, %v", got, err)
	}
}

func TestBlockDevices(t *testing.T) {
	disk := func(name, sched string, ra, rot int) facts.BlockNode {
		return facts.BlockNode{Name: name, Kind: facts.BlockDisk, Scheduler: sched, ReadAheadKB: ra, Rotational: rot}
	}
	part := func(name, d string) facts.BlockNode {
		return facts.BlockNode{Name: name, Kind: facts.BlockPartition, Disk: d, ReadAheadKB: -1, Rotational: -1}
	}
	for _, c := range []struct {
		file string
		want *facts.BlockDevices
	}{
		{"log-devices/virtio-disk-this-machine.txt", &facts.BlockDevices{ByNumber: map[string]string{"254:0": "vda"}, Nodes: map[string]facts.BlockNode{"vda": disk("vda", "mq-deadline", 8192, 1)}}},
		{"log-devices/lvm-on-md-raid1-reconstructed.txt", &facts.BlockDevices{ByNumber: map[string]string{"253:0": "dm-0", "8:1": "sda1"}, Nodes: map[string]facts.BlockNode{
			"dm-0": {Name: "dm-0", Kind: facts.BlockDM, DMName: "vg0-kafka", Slaves: []string{"md0"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
			"md0":  {Name: "md0", Kind: facts.BlockMD, Slaves: []string{"sdb1", "sdc1"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
			"sda1": part("sda1", "sda"), "sdb1": part("sdb1", "sdb"), "sdc1": part("sdc1", "sdc"),
			"sda": disk("sda", "mq-deadline", 128, 0), "sdb": disk("sdb", "none", 128, 1), "sdc": disk("sdc", "none", 128, 1),
		}}},
		{"log-devices/nvme-partition-and-tmpfs-reconstructed.txt", &facts.BlockDevices{ByNumber: map[string]string{"259:2": "nvme0n1p2", "0:45": ""}, Nodes: map[string]facts.BlockNode{
			"nvme0n1p2": part("nvme0n1p2", "nvme0n1"), "nvme0n1": disk("nvme0n1", "none", 128, 0),
		}}},
		{"log-devices/loop-ext4-image-this-machine.txt", &facts.BlockDevices{ByNumber: map[string]string{"7:0": "loop0"}, Nodes: map[string]facts.BlockNode{
			"loop0": {Name: "loop0", Kind: facts.BlockLoop, Scheduler: "none", ReadAheadKB: 2560, Rotational: 1}}}},
		{"log-devices/no-sys-container-reconstructed.txt", &facts.BlockDevices{ByNumber: map[string]string{}, Nodes: map[string]facts.BlockNode{}, NoSys: true}},
		{"log-devices/denied-queue-reconstructed.txt", &facts.BlockDevices{ByNumber: map[string]string{"8:16": "sdb"}, Nodes: map[string]facts.BlockNode{
			"sdb": {Name: "sdb", Kind: facts.BlockDisk, ReadAheadKB: 128, Rotational: -1, Unread: map[string]string{"scheduler": "denied", "rotational": "absent"}},
		}}},
	} {
		got, err := BlockDevices(readTestdata(t, c.file))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", c.file, got, err, c.want)
		}
	}
}

func TestBlockDevicesStrict(t *testing.T) {
	for _, body := range []string{
		"dev 8:0 ../../etc\n", // not a node name
		"dev sda sda\n",       // not a device number
		"slave sda sdb\n",     // of a node not listed
		"node sda disk\nqueue sda rotational 2\n",
		"node sda disk\nqueue sda read_ahead_kb lots\n",
		"node sda disk\nqueue sda scheduler mq-deadline none\n", // nothing selected
		"node sda disk\nqueue sda nr_requests 64\n",
		"node sda tape\n",
		"node loop0 loop /var/x.img\n",
		"node sda1 partition\n",
		"hello\n",
	} {
		if got, err := BlockDevices(body); err == nil {
			t.Errorf("%q: read as %+v", strings.TrimSpace(body), got)
		}
	}
}
