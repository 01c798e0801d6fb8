package parse

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestFeasibility(t *testing.T) {
	rw := "-rw-r--r--"
	ro := "-r--r--r--"
	dir := func(mode string, w bool, mount, fs string, readOnly bool) facts.Dir {
		return facts.Dir{Exists: true, Mode: mode, Writable: w, Mount: mount, FSType: fs, ReadOnly: readOnly}
	}
	absent := func(mount, fs string) facts.Dir { return facts.Dir{Mount: mount, FSType: fs} }
	drwx := "drwxr-xr-x"
	tests := []struct {
		file  string
		modes map[string]string
		dirs  map[string]facts.Dir
	}{
		{
			file:  "feasibility/debian12-root-netns.txt",
			modes: map[string]string{"net.core.somaxconn": rw, "net.core.rmem_max": rw, "net.core.wmem_default": rw, "net.ipv4.tcp_syncookies": rw, "net.core.default_qdisc": rw},
			dirs: map[string]facts.Dir{
				"/etc": dir(drwx, true, "/", "ext4", false), "/etc/sysctl.d": dir(drwx, true, "/", "ext4", false),
				"/etc/udev/rules.d": absent("/", "ext4"), "/etc/NetworkManager/system-connections": absent("/", "ext4"),
				"/etc/sysconfig/network-scripts": absent("/", "ext4"), "/etc/network": dir(drwx, true, "/", "ext4", false),
				"/etc/systemd/network": dir(drwx, true, "/", "ext4", false), "/opt/kafka/config": absent("/", "ext4"),
			},
		},
		{
			// A child network namespace: the net.core buffer limits are
			// 0444, default_qdisc does not exist; /etc/sysctl.d is a
			// read-only bind mount (test -w said no).
			file:  "feasibility/debian12-child-netns-ro-sysctld.txt",
			modes: map[string]string{"net.core.somaxconn": rw, "net.core.rmem_max": ro, "net.core.wmem_default": ro, "net.ipv4.tcp_syncookies": rw},
			dirs: map[string]facts.Dir{
				"/etc": dir(drwx, true, "/", "ext4", false), "/etc/sysctl.d": dir(drwx, false, "/etc/sysctl.d", "ext4", true),
				"/etc/udev/rules.d": absent("/", "ext4"), "/etc/NetworkManager/system-connections": absent("/", "ext4"),
				"/etc/sysconfig/network-scripts": absent("/", "ext4"), "/etc/network": dir(drwx, true, "/", "ext4", false),
				"/etc/systemd/network": dir(drwx, true, "/", "ext4", false), "/opt/kafka/config": absent("/", "ext4"),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			f := Feasibility(string(raw))
			if !reflect.DeepEqual(f.SysctlModes, tc.modes) {
				t.Errorf("modes:\n got %v\nwant %v", f.SysctlModes, tc.modes)
			}
			for p, want := range tc.dirs {
				if got := f.Dirs[p]; got != want {
					t.Errorf("dir %s:\n got %+v\nwant %+v", p, got, want)
				}
			}
			if len(f.Dirs) != len(tc.dirs) {
				t.Errorf("%d dirs, want %d: %v", len(f.Dirs), len(tc.dirs), f.Dirs)
			}
			if f.NetNS != "" || f.SELinux != "" || !f.Chcon {
				t.Errorf("netns %q selinux %q chcon %v: want unknown (PID 1's namespace unreadable), none, present (coreutils)", f.NetNS, f.SELinux, f.Chcon)
			}
		})
	}
}

func TestFeasibilityLines(t *testing.T) {
	f := Feasibility("mode net.core.somaxconn -rw-r--r--\nmode bad;key -rw-r--r--\nmode net.core.x 0644\n" +
		"netns-self net:[1]\nnetns-init net:[2]\nselinux 1\ntool chcon\n" +
		"dir yes drwxr-xr-x /etc/x\\040y\nmount rw ext4 /\nmount ro tmpfs /etc/x\\040y\nmount rw ext4 /etc/x\\040yz\n")
	if want := map[string]string{"net.core.somaxconn": "-rw-r--r--"}; !reflect.DeepEqual(f.SysctlModes, want) {
		t.Errorf("modes %v, want %v", f.SysctlModes, want)
	}
	if f.NetNS != facts.NetNSOther || f.SELinux != "enforcing" || !f.Chcon {
		t.Errorf("netns %q selinux %q chcon %v", f.NetNS, f.SELinux, f.Chcon)
	}
	// The dir line's path is printed raw; mount points are unescaped.
	if d := f.Dirs[`/etc/x\040y`]; d.Mount != "/" {
		t.Errorf("dir with a literal backslash: %+v", d)
	}
	f = Feasibility("dir no drwxr-xr-x /etc/x y\nmount rw ext4 /\nmount ro tmpfs /etc/x\\040y\nmount rw ext4 /etc/x\\040yz\n")
	if d := f.Dirs["/etc/x y"]; !d.ReadOnly || d.Mount != "/etc/x y" || d.FSType != "tmpfs" {
		t.Errorf("dir on a read-only mount with a space: %+v", d)
	}
}

// TestFeasibilityContainer: a host that is a container, which shares its
// kernel with the node. The file is the gather's section on a privileged
// Docker container (Debian 12: /.dockerenv, /proc/sys writable, so a
// vm.* write would reach the node's kernel); the lines are the other
// runtimes' signs and Docker's default /proc/sys, which moby mounts
// read-only (oci/defaults.go ReadonlyPaths: /proc/bus, /proc/fs, /proc/irq,
// /proc/sys, /proc/sysrq-trigger).
func TestFeasibilityContainer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "feasibility/debian12-docker-privileged.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, container string
		procSysRO             bool
	}{
		{"privileged docker (captured)", string(raw), "docker (/.dockerenv)", false},
		{"docker's default /proc/sys", "mount rw proc /proc\nmount ro proc /proc/sys\nmount rw binfmt_misc /proc/sys/fs/binfmt_misc\ncontainer docker /.dockerenv\n", "docker (/.dockerenv)", true},
		{"a mount under /proc/sys is not /proc/sys", "mount rw proc /proc\nmount ro binfmt_misc /proc/sys/fs/binfmt_misc\n", "", false},
		{"systemd's container file, first sign wins", "container systemd-nspawn /run/systemd/container\ncontainer docker /.dockerenv\n", "systemd-nspawn (/run/systemd/container)", false},
		{"podman", "container podman /run/.containerenv\n", "podman (/run/.containerenv)", false},
		{"kubernetes", "container kubernetes /var/run/secrets/kubernetes.io\n", "kubernetes (/var/run/secrets/kubernetes.io)", false},
		{"hostile kind", "container \x1b[31mevil /run/systemd/container\ncontainer lxc;reboot /run/systemd/container\n", "", false},
		{"a file the gather never reads", "container docker /etc/passwd\n", "", false},
		{"an empty container file", "container  /run/systemd/container\n", "", false},
		{"a plain host", "mount rw proc /proc\nmount rw ext4 /\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Feasibility(tc.body)
			if f.Container != tc.container || f.ProcSysReadOnly != tc.procSysRO {
				t.Errorf("container %q, /proc/sys read-only %v; want %q, %v", f.Container, f.ProcSysReadOnly, tc.container, tc.procSysRO)
			}
		})
	}
	if f := Feasibility(string(raw)); f.SysctlModes["vm.swappiness"] != "-rw-r--r--" {
		t.Errorf("vm.swappiness mode %q: the captured container can write it", f.SysctlModes["vm.swappiness"])
	}
}
