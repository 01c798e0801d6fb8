package gather

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// storageScript is the script's helpers and its broker-cgroup and
// log-devices sections, cut from the embedded gather.sh.
func storageScript(t *testing.T) string {
	t.Helper()
	head := scriptBody[:strings.Index(scriptBody, "# why FILE:")]
	i := strings.Index(scriptBody, "# The broker's memory cgroup")
	j := strings.Index(scriptBody, "# What kaudit's changes need here")
	if i < 0 || j < i {
		t.Fatal("the storage sections are not where the test looks for them")
	}
	return head + scriptBody[i:j]
}

// tree writes files (path → content; content "->TARGET" makes a symlink
// to root/TARGET) under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(c, "->"):
			err = os.Symlink(filepath.Join(root, c[2:]), p)
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// queue is a node's queue files.
func queue(dir, sched, ra, rot string) map[string]string {
	return map[string]string{dir + "/queue/scheduler": sched + "\n", dir + "/queue/read_ahead_kb": ra + "\n", dir + "/queue/rotational": rot + "\n"}
}

// TestStorageSectionsOnATree runs the two sections under dash and busybox
// sh, as root in a private mount namespace (unshare -m) where a temporary
// tree is bound over /proc, /sys/fs/cgroup, /sys/dev/block and
// /sys/class/block: an LV on a RAID1 of two partitions of spinning disks,
// and a cgroup v2 unit with MemoryMax=8G. Nothing outside the namespace
// sees the mounts; the tree is removed with the test's temp dir.
func TestStorageSectionsOnATree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for unshare -m")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	root := t.TempDir()
	files := map[string]string{
		"proc/4242/cgroup":                           "0::/system.slice/kafka.service\n",
		"cg/cgroup.procs":                            "1\n",
		"cg/system.slice/memory.max":                 "max\n",
		"cg/system.slice/memory.high":                "max\n",
		"cg/system.slice/kafka.service/memory.max":   "8589934592\n",
		"cg/system.slice/kafka.service/memory.high":  "max\n",
		"cg/system.slice/kafka.service/cgroup.procs": "4241\n4242\n",
		"devices/virtual/block/dm-0/dm/name":         "vg0-kafka\n",
		"devices/virtual/block/dm-0/slaves/md0":      "->devices/virtual/block/md0",
		"devices/virtual/block/md0/md/level":         "raid1\n",
		"devices/virtual/block/md0/slaves/sdb1":      "->devices/pci/block/sdb/sdb1",
		"devices/virtual/block/md0/slaves/sdc1":      "->devices/pci/block/sdc/sdc1",
		"devices/pci/block/sdb/sdb1/partition":       "1\n",
		"devices/pci/block/sdc/sdc1/partition":       "1\n",
		"sysdev/253:0":                               "->devices/virtual/block/dm-0",
		"class/dm-0":                                 "->devices/virtual/block/dm-0",
		"class/md0":                                  "->devices/virtual/block/md0",
		"class/sdb1":                                 "->devices/pci/block/sdb/sdb1",
		"class/sdc1":                                 "->devices/pci/block/sdc/sdc1",
		"class/sdb":                                  "->devices/pci/block/sdb",
		"class/sdc":                                  "->devices/pci/block/sdc",
	}
	for _, q := range []map[string]string{
		queue("devices/virtual/block/dm-0", "none", "4096", "1"), queue("devices/virtual/block/md0", "none", "4096", "1"),
		queue("devices/pci/block/sdb", "mq-deadline kyber bfq [none]", "128", "1"), queue("devices/pci/block/sdc", "mq-deadline kyber bfq [none]", "128", "1"),
	} {
		for k, v := range q {
			files[k] = v
		}
	}
	tree(t, root, files)
	const marker = "KAUDITTEST"
	harness := "set -e\n" +
		"mount --bind " + root + "/proc /proc\n" +
		"mount --bind " + root + "/cg /sys/fs/cgroup\n" +
		"mount --bind " + root + "/sysdev /sys/dev/block\n" +
		"mount --bind " + root + "/class /sys/class/block\n" +
		"set +e\n"
	body := "M=" + marker + "\npid=4242\nmi='mi=40 1 253:0 / /var/lib/kafka rw,noatime - xfs /dev/mapper/vg0-kafka rw'\n" + storageScript(t)
	for _, sh := range [][]string{{"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		t.Run(sh[0], func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(root, "body.sh"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", harness+strings.Join(sh, " ")+" "+root+"/body.sh")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			secs, err := remote.Sections([]byte(string(out)+marker+" done\n"), marker, "test")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			cg, err := parse.CgroupMemory(secs[facts.SecCgroup].Body)
			wantCg := &facts.CgroupMemory{Version: 2, Path: "/system.slice/kafka.service", Member: facts.MemberYes, Limits: []facts.CgroupLimit{
				{Path: "/system.slice/kafka.service", File: "memory.max", Bytes: 8 << 30},
				{Path: "/system.slice/kafka.service", File: "memory.high", Bytes: facts.Unlimited},
				{Path: "/system.slice", File: "memory.max", Bytes: facts.Unlimited},
				{Path: "/system.slice", File: "memory.high", Bytes: facts.Unlimited},
				{Path: "/", File: "memory.max", Absent: true},
				{Path: "/", File: "memory.high", Absent: true},
			}}
			if err != nil || !reflect.DeepEqual(cg, wantCg) {
				t.Errorf("cgroup %+v, %v\n%s", cg, err, out)
			}
			d, err := parse.BlockDevices(secs[facts.SecLogDevices].Body)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			disk := func(n string) facts.BlockNode {
				return facts.BlockNode{Name: n, Kind: facts.BlockDisk, Scheduler: "none", ReadAheadKB: 128, Rotational: 1}
			}
			want := &facts.BlockDevices{ByNumber: map[string]string{"253:0": "dm-0"}, Nodes: map[string]facts.BlockNode{
				"dm-0": {Name: "dm-0", Kind: facts.BlockDM, DMName: "vg0-kafka", Slaves: []string{"md0"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
				"md0":  {Name: "md0", Kind: facts.BlockMD, Slaves: []string{"sdb1", "sdc1"}, Scheduler: "none", ReadAheadKB: 4096, Rotational: 1},
				"sdb1": {Name: "sdb1", Kind: facts.BlockPartition, Disk: "sdb", ReadAheadKB: -1, Rotational: -1},
				"sdc1": {Name: "sdc1", Kind: facts.BlockPartition, Disk: "sdc", ReadAheadKB: -1, Rotational: -1},
				"sdb":  disk("sdb"), "sdc": disk("sdc"),
			}}
			if !reflect.DeepEqual(d, want) {
				t.Errorf("devices\n got %+v\nwant %+v\n%s", d, want, out)
			}
		})
	}
}
