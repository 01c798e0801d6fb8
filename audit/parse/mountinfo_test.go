package parse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestMountinfoSamples(t *testing.T) {
	tests := []struct {
		file, point, fstype, source, device string
		opt                                 string // one of its mount or super options
	}{
		{"linux-6.18-unshare-this-machine.txt", "/tmp/fsnet-cap/with space", "tmpfs", "tmpfs", "0:40", "rw"},
		{"linux-6.18-unshare-this-machine.txt", "/tmp/fsnet-cap/e4", "ext4", "/dev/loop0", "7:0", "noatime"},
		{"linux-6.18-unshare-this-machine.txt", "/tmp/fsnet-cap/ov/m", "overlay", "overlay", "0:41", "uuid=on"},
		{"linux-6.18-this-machine.txt", "/", "ext4", "/dev/vda", "254:0", "discard"},
		{"rhel-xfs.txt", "/", "xfs", "/dev/mapper/rootvg-lvlocroot", "253:0", "inode64"},
		{"rhel-xfs.txt", "/data", "ext4", "/dev/mapper/vgdata-lvdata", "253:19", "data=ordered"},
		{"k8s-nfs4.txt", "/kaiwudb/certs", "nfs4", "20.20.20.43:/data/k8s/nfs_share/pvc-2108ee90-b185-43f7-a95c-21d9a4d84a67", "0:212", "vers=4.1"},
	}
	for _, tt := range tests {
		t.Run(tt.file+tt.point, func(t *testing.T) {
			ms, err := Mountinfo(readTestdata(t, "mountinfo/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var got *Mount
			for i := range ms {
				if ms[i].Point == tt.point {
					got = &ms[i]
				}
			}
			if got == nil {
				t.Fatalf("no mount at %q in %v", tt.point, ms)
			}
			if got.FSType != tt.fstype || got.Source != tt.source || got.Device != tt.device {
				t.Errorf("got %s %s %s, want %s %s %s", got.FSType, got.Source, got.Device, tt.fstype, tt.source, tt.device)
			}
			all := append(append([]string{}, got.Options...), got.Super...)
			if !strings.Contains(","+strings.Join(all, ",")+",", ","+tt.opt+",") {
				t.Errorf("options %v lack %q", all, tt.opt)
			}
		})
	}
}

func TestMountinfoEverySampleParses(t *testing.T) {
	for _, f := range allSamples(t, "mountinfo") {
		ms, err := Mountinfo(readTestdata(t, strings.TrimPrefix(f, "testdata/")))
		if err != nil || len(ms) == 0 {
			t.Errorf("%s: %d mounts, %v", f, len(ms), err)
		}
	}
}

func TestMountinfoRejects(t *testing.T) {
	for _, line := range []string{
		"no separator here",
		"14 1 0:9 /only - nfs4 h:/x rw",
		"x 1 0:9 / /a rw - ext4 /dev/sda rw",
		"14 1 09 / /a rw - ext4 /dev/sda rw",
		"14 1 0:9 / /a rw shared:1 -",
	} {
		if ms, err := Mountinfo(line); err == nil {
			t.Errorf("%q: parsed as %v, want an error", line, ms)
		}
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`a\040b\011c\134d`: "a b\tc\\d",
		`a\12`:             `a\12`, // two digits: not an escape
		`end\`:             `end\`,
		`\777`:             `\777`, // above a byte
		`plain`:            "plain",
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMountOf(t *testing.T) {
	ms, err := Mountinfo(strings.Join([]string{
		"1 0 8:1 / / rw - ext4 /dev/sda1 rw",
		"2 1 8:2 / /data rw - xfs /dev/sdb1 rw",
		"3 1 0:40 / /data rw - tmpfs tmpfs rw", // stacked on /data: hides the xfs
		"4 1 8:3 / /data2 rw - ext4 /dev/sdc1 rw",
	}, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/data/kafka":  "tmpfs",
		"/data":        "tmpfs",
		"/data2/kafka": "ext4 /dev/sdc1",
		"/database":    "ext4 /dev/sda1",
		"/":            "ext4 /dev/sda1",
	} {
		m, ok := MountOf(ms, path)
		got := m.FSType
		if m.FSType == "ext4" {
			got += " " + m.Source
		}
		if !ok || got != want {
			t.Errorf("MountOf(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}

func TestLogDirsSection(t *testing.T) {
	got, err := LogDirs(readTestdata(t, "log-dirs/unshare-nobody-this-machine.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.LogDir{
		{Path: "/tmp/fsnet-cap/t/kafka", Exists: true, Mount: "/tmp/fsnet-cap/t", FSType: "tmpfs", Source: "kafka-tmp", Device: "0:39", Options: []string{"rw", "relatime", "rw", "size=16384k"}, Segments: 1},
		{Path: "/tmp/fsnet-cap/e4/kafka", Exists: true, Mount: "/tmp/fsnet-cap/e4", FSType: "ext4", Source: "/dev/loop0", Device: "7:0", Options: []string{"rw", "noatime", "rw"}, Segments: 3},
		{Path: "/tmp/fsnet-cap/with space/k", Exists: true, Mount: "/tmp/fsnet-cap/with space", FSType: "tmpfs", Source: "tmpfs", Device: "0:40", Options: []string{"rw", "relatime", "rw"}, Segments: -1},
		{Path: "/tmp/fsnet-cap/link", Exists: true, Mount: "/", FSType: "ext4", Source: "/dev/vda", Device: "254:0", Options: []string{"rw", "relatime", "rw", "discard", "resv_strict", "resuid=65534", "resgid=65534"}, SameDeviceAsRoot: true, Segments: 3},
		{Path: "/var/lib/kafka-missing", Segments: -1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LogDirs:\n got %+v\nwant %+v", got, want)
	}
}

func TestLogDirsRejects(t *testing.T) {
	for _, body := range []string{
		"real=/x\nsegments=1",
		"dir=/x\nreal=/x\nsegments=many",
		"dir=/x\nreal=/x\nsegments=1\nmi=garbage",
	} {
		if d, err := LogDirs(body); err == nil {
			t.Errorf("%q: parsed as %+v, want an error", body, d)
		}
	}
}

func TestLogDirsBtrfsSubvolumeIsRootDevice(t *testing.T) {
	body := "dir=/srv/kafka\nreal=/srv/kafka\nsegments=0\n" +
		"mi=28 22 0:41 /@ / rw,relatime - btrfs /dev/sda2 rw,subvol=/@\n" +
		"mi=29 22 0:42 /@srv /srv rw,relatime - btrfs /dev/sda2 rw,subvol=/@srv"
	d, err := LogDirs(body)
	if err != nil || len(d) != 1 || !d[0].SameDeviceAsRoot {
		t.Errorf("LogDirs = %+v, %v; want one dir on the root's device", d, err)
	}
}
