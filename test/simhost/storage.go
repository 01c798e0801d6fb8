package simhost

import "fmt"

// CgroupNoLimit is the broker-cgroup section of a broker run by systemd
// as kafka.service on cgroup v2 without a memory limit.
const CgroupNoLimit = "version 2\npath /system.slice/kafka.service\nmember yes\n" +
	"limit memory.max max /system.slice/kafka.service\nlimit memory.high max /system.slice/kafka.service\n" +
	"limit memory.max max /system.slice\nlimit memory.high max /system.slice\n" +
	"limit memory.max !absent /\nlimit memory.high !absent /\n"

// CgroupMemoryMax is CgroupNoLimit with MemoryMax=bytes on the unit.
func CgroupMemoryMax(bytes int64) string {
	return fmt.Sprintf("version 2\npath /system.slice/kafka.service\nmember yes\n"+
		"limit memory.max %d /system.slice/kafka.service\nlimit memory.high max /system.slice/kafka.service\n"+
		"limit memory.max max /system.slice\nlimit memory.high max /system.slice\n"+
		"limit memory.max !absent /\nlimit memory.high !absent /\n", bytes)
}

// The log-devices sections of the demo's log-dirs sections: an NVMe disk
// (LogDirsXFS), an LV on a spinning disk without a scheduler
// (logDirsOnRoot), a tmpfs over a virtio disk (logDirsTmpfs).
const (
	devicesNVMe = "dev 253:0 dm-0\ndev 259:1 nvme1n1\n" +
		"node dm-0 dm rootvg-root\nslave dm-0 nvme0n1p2\nqueue dm-0 scheduler none\nqueue dm-0 read_ahead_kb 128\nqueue dm-0 rotational 0\n" +
		"node nvme1n1 disk\nqueue nvme1n1 scheduler [none] mq-deadline\nqueue nvme1n1 read_ahead_kb 128\nqueue nvme1n1 rotational 0\n" +
		"node nvme0n1p2 partition nvme0n1\n" +
		"node nvme0n1 disk\nqueue nvme0n1 scheduler [none] mq-deadline\nqueue nvme0n1 read_ahead_kb 128\nqueue nvme0n1 rotational 0\n"
	devicesRootLVOnHDD = "dev 253:0 dm-0\n" +
		"node dm-0 dm rootvg-lvlocroot\nslave dm-0 sda2\nqueue dm-0 scheduler none\nqueue dm-0 read_ahead_kb 4096\nqueue dm-0 rotational 1\n" +
		"node sda2 partition sda\n" +
		"node sda disk\nqueue sda scheduler mq-deadline kyber bfq [none]\nqueue sda read_ahead_kb 128\nqueue sda rotational 1\n"
	devicesTmpfs = "dev 8:1 vda1\ndev 0:26 !absent\nnode vda1 partition vda\n" +
		"node vda disk\nqueue vda scheduler [mq-deadline] none\nqueue vda read_ahead_kb 128\nqueue vda rotational 1\n"
)

// devicesFor is the log-devices section under a log-dirs section.
func devicesFor(logDirs string) string {
	switch logDirs {
	case logDirsOnRoot:
		return devicesRootLVOnHDD
	case logDirsTmpfs:
		return devicesTmpfs
	}
	return devicesNVMe
}

func withCgroup(k *Kafka, body string) *Kafka {
	k.Cgroup = body
	return k
}
