package gather_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/audit/transport"
)

var keys = []string{"net.core.somaxconn", "net.ipv4.tcp_syncookies", "net.ipv4.tcp_rmem", "net.ipv4.tcp_timestamps", "net.core.default_qdisc", "net.no_such.key"}

// runLocal runs the gather script of p under sh and parses its output.
func runLocal(t *testing.T, sh []string, p gather.Params) (*facts.Facts, string) {
	t.Helper()
	p.Marker = gather.NewMarker()
	script, err := gather.Script(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), sh[0], append(sh[1:], "-s")...)
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", sh, err)
	}
	f, err := gather.Parse(out, p.Marker, p.KafkaPort)
	if err != nil {
		t.Fatal(err)
	}
	return f, string(out)
}

// TestScriptOnThisMachine runs the real gather script under every POSIX
// shell present and compares the facts with /proc read directly.
func TestScriptOnThisMachine(t *testing.T) {
	shells := [][]string{{"dash"}, {"busybox", "sh"}, {"sh"}}
	ran := 0
	for _, sh := range shells {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		ran++
		t.Run(strings.Join(sh, "-"), func(t *testing.T) {
			f, _ := runLocal(t, sh, gather.Params{KafkaPort: 9092, SysctlKeys: keys})
			for _, k := range keys[:5] {
				raw, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(k, ".", "/"))
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(strings.Fields(string(raw)), " "); f.Sysctl[k] != want {
					t.Errorf("%s = %q, /proc says %q", k, f.Sysctl[k], want)
				}
			}
			if _, ok := f.Sysctl["net.no_such.key"]; ok {
				t.Errorf("absent key reported as present")
			}
			if st := f.Sections["sysctl"]; st.State != "partial" || !strings.Contains(st.Message, "net.no_such.key (absent)") {
				t.Errorf("absent key not recorded: %+v", st)
			}
			rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
			if f.Kernel.Release != strings.TrimSpace(string(rel)) {
				t.Errorf("release %q, want %q", f.Kernel.Release, rel)
			}
			if f.Kernel.Distro == "" {
				t.Errorf("distro not read from os-release")
			}
			// Feasibility: the mode of each entry as the kernel reports it.
			fi, err := os.Stat("/proc/sys/net/core/somaxconn")
			if err != nil {
				t.Fatal(err)
			}
			if f.Feasibility == nil || f.Feasibility.SysctlModes["net.core.somaxconn"] != fi.Mode().String() {
				t.Errorf("feasibility %+v, want net.core.somaxconn mode %s", f.Feasibility, fi.Mode())
			} else if _, ok := f.Feasibility.SysctlModes["net.no_such.key"]; ok || f.Feasibility.Dirs["/etc"].Mount == "" {
				t.Errorf("feasibility: absent key has a mode, or /etc has no mount: %+v", f.Feasibility)
			}
			// Kernel capabilities: the congestion controls as /proc lists
			// them, module support as /proc/modules says.
			if k := f.Feasibility.Kernel; k == nil {
				t.Errorf("no kernel-caps facts: %+v", f.Sections[facts.SecKernelCaps])
			} else {
				cc, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
				_, pmErr := os.Stat("/proc/modules")
				if strings.Join(k.Congestion, " ") != strings.Join(strings.Fields(string(cc)), " ") || k.Release != f.Kernel.Release ||
					(pmErr != nil) != (k.Modules == facts.ModulesNone) {
					t.Errorf("kernel-caps %+v, want congestion %q, /proc/modules error %v", k, cc, pmErr)
				}
				if _, err := os.Stat("/proc/config.gz"); err == nil && k.Config == nil {
					t.Errorf("/proc/config.gz present but no configuration read: %+v", k)
				}
			}
			// TcpExt counters: compare a counter that only grows.
			raw, _ := os.ReadFile("/proc/net/netstat")
			if !strings.Contains(string(raw), "TcpExt:") {
				t.Skip("no TcpExt here")
			}
			if _, ok := f.Netstat["TcpExt"]["ListenOverflows"]; !ok {
				t.Errorf("TcpExt.ListenOverflows missing: %v", f.Netstat)
			}
			if _, err := exec.LookPath("ss"); err == nil {
				if f.Listeners == nil || f.Established == nil || f.Conns == nil {
					t.Errorf("ss present but no listener or connection facts: %+v", f.Sections)
				}
				if f.ConnsTotal < len(f.Conns) || f.Role != "" {
					t.Errorf("conns: total %d < %d listed, role %q", f.ConnsTotal, len(f.Conns), f.Role)
				}
				// No broker candidate here: ss runs without -p (which reads
				// every descriptor of every process), so no listener has an owner.
				for _, l := range f.Listeners {
					if f.Kafka == nil && (l.PID != 0 || l.Process != "") {
						t.Errorf("no broker, yet listener %+v has an owner: ss -p ran", l)
						break
					}
				}
			}
		})
	}
	if ran == 0 {
		t.Skip("no POSIX shell found")
	}
}

// TestLocalRunner goes through transport.Local, as connection: local does.
func TestLocalRunner(t *testing.T) {
	marker := gather.NewMarker()
	script, _ := gather.Script(gather.Params{KafkaPort: 9092, SysctlKeys: keys, Marker: marker})
	out, err := transport.Local{}.Run(context.Background(), transport.Target{Name: "local", Local: true}, script)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gather.Parse(out.Stdout, marker, 9092)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile("/proc/sys/net/core/somaxconn")
	n, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if got, _ := strconv.Atoi(f.Sysctl["net.core.somaxconn"]); got != n {
		t.Fatalf("somaxconn %d, want %d", got, n)
	}
}

// TestClientProfileOnThisMachine runs the client profile: kernel, sysctls
// and connections only, with no note about the broker sections it skips.
func TestClientProfileOnThisMachine(t *testing.T) {
	if _, err := exec.LookPath("ss"); err != nil {
		t.Skip("no ss")
	}
	f, _ := runLocal(t, []string{"sh"}, gather.Params{KafkaPort: 9092, SysctlKeys: keys, Client: true, ClientPorts: []int{9092, 22}})
	if f.Role != "client" || f.Conns == nil || f.Kernel.Release == "" || f.Sysctl == nil || f.Kafka != nil || f.Listeners != nil {
		t.Fatalf("client facts: role %q conns %v kernel %q kafka %v listeners %v", f.Role, f.Conns, f.Kernel.Release, f.Kafka, f.Listeners)
	}
	for name, st := range f.Sections {
		if name != "sysctl" {
			t.Errorf("section %s noted on a client: %+v", name, st)
		}
	}
	for _, c := range f.Conns {
		if c.PeerPort != 9092 && c.PeerPort != 22 {
			t.Errorf("connection to port %d listed", c.PeerPort)
		}
	}
}

// TestEarlyReadsOnThisMachine: the catalog's files and the default-route
// interfaces are read by the script's first awk (written on fd 3, printed
// in the host and nics sections later); compared with /proc and /sys read
// directly, under every POSIX shell present.
func TestEarlyReadsOnThisMachine(t *testing.T) {
	const readable, absent = "/proc/sys/kernel/ostype", "/proc/sys/kernel/no_such_file"
	raw, err := os.ReadFile(readable)
	if err != nil {
		t.Skip(err)
	}
	route, err := os.ReadFile("/proc/net/route")
	if err != nil {
		t.Skip(err)
	}
	var want []string // the default route's interfaces, as /proc/net/route lists them
	for i, l := range strings.Split(string(route), "\n") {
		if f := strings.Fields(l); i > 0 && len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" && !slices.Contains(want, f[0]) {
			want = append(want, f[0])
		}
	}
	for _, sh := range [][]string{{"dash"}, {"busybox", "sh"}} {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		t.Run(strings.Join(sh, "-"), func(t *testing.T) {
			f, _ := runLocal(t, sh, gather.Params{KafkaPort: 9092, SysctlKeys: keys[:1], Files: []string{readable, absent}})
			if got := f.Files[readable]; got != strings.TrimSpace(string(raw)) {
				t.Errorf("%s = %q, want %q", readable, got, raw)
			}
			if _, ok := f.Files[absent]; ok || !strings.Contains(f.Sections[facts.SecHost].Message, absent) {
				t.Errorf("absent file: files %v, host section %+v", f.Files, f.Sections[facts.SecHost])
			}
			var got []string
			for _, n := range f.NICs {
				got = append(got, n.Name)
			}
			if _, err := exec.LookPath("ethtool"); err != nil {
				return // the nics section is "missing": no interface parsed
			}
			for _, w := range want { // an IPv6 default route may add more
				if !slices.Contains(got, w) {
					t.Errorf("nics %v, want the default route's %v", got, want)
				}
			}
		})
	}
}
