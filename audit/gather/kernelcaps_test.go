package gather_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/internal/remote"
)

// kernelCapsSection is gather.sh's kernel-caps section with the helpers
// it uses, its absolute paths (/proc, /lib/modules, /usr/lib/modules,
// /boot) moved under root: a test-only rewrite, so that the real shell
// code runs on a hand-made kernel tree.
func kernelCapsSection(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile("gather.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, "\n# What the running kernel has and can load"), strings.Index(s, "\ne kernel-caps\n")
	if i < 0 || j < 0 {
		t.Fatal("no kernel-caps section in gather.sh")
	}
	sec := s[i+1 : j+len("\ne kernel-caps\n")]
	r := strings.NewReplacer("/proc/", root+"/proc/", "/usr/lib/modules/", root+"/usr/lib/modules/", "/lib/modules/", root+"/lib/modules/", "/boot/", root+"/boot/")
	return "M=XX\nNL='\n'\nb() { printf '%s begin %s\\n' \"$M\" \"$1\"; }\ne() { printf '\\n%s end %s %s\\n' \"$M\" \"$1\" \"${2:-ok}\"; }\nhave() { command -v \"$1\" >/dev/null 2>&1; }\nz=''\nif have gzip; then z='gzip -cd'; elif have zcat; then z='zcat'; fi\n" + r.Replace(sec)
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(body)
		if strings.HasSuffix(name, ".gz") {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKernelCapsSection runs the section under each POSIX shell on three
// hand-made trees and compares its output with the parser's samples made
// from them (audit/parse/testdata/kernel-caps/*-reconstructed.txt), and
// checks the guards: no zcat, zcat failing, modules.dep missing.
func TestKernelCapsSection(t *testing.T) {
	trees := []struct {
		name   string
		files  map[string]string
		sample string // the parser's sample this tree gives; "" to check want
		want   []string
		absent []string
	}{
		{
			name: "custom kernel, modules.builtin, config.gz",
			files: map[string]string{
				"proc/sys/kernel/osrelease":                          "6.1.0-kaudit\n",
				"proc/sys/kernel/modules_disabled":                   "0\n",
				"proc/sys/net/ipv4/tcp_available_congestion_control": "reno cubic\n",
				"proc/modules":                             "",
				"lib/modules/6.1.0-kaudit/modules.dep":     "",
				"lib/modules/6.1.0-kaudit/modules.builtin": "kernel/net/ipv4/tcp_cubic.ko\nkernel/drivers/net/virtio_net.ko\nkernel/drivers/net/ethernet/intel/e1000e/e1000e.ko\nkernel/net/packet/af_packet.ko\n",
				"proc/config.gz":                           "CONFIG_MODULES=y\n# CONFIG_MODULE_FORCE_LOAD is not set\nCONFIG_TCP_CONG_ADVANCED=y\nCONFIG_TCP_CONG_CUBIC=y\n# CONFIG_TCP_CONG_BBR is not set\nCONFIG_DEFAULT_TCP_CONG=\"cubic\"\nCONFIG_NET_SCHED=y\n# CONFIG_NET_SCH_FQ is not set\nCONFIG_NET_SCH_FIFO=y\n",
			},
			sample: "custom-builtin-no-bbr-no-fq-reconstructed.txt",
		},
		{
			name: "no module tree, no config",
			files: map[string]string{
				"proc/sys/kernel/osrelease":                          "5.15.0-105-generic\n",
				"proc/sys/kernel/modules_disabled":                   "0\n",
				"proc/sys/net/ipv4/tcp_available_congestion_control": "reno cubic\n",
				"proc/modules": "",
			},
			sample: "no-module-tree-no-config-reconstructed.txt",
		},
		{
			name: "modules.dep missing: the module files; /boot config; .ko.xz",
			files: map[string]string{
				"proc/sys/kernel/osrelease": "6.12.0-1-amd64\n",
				"proc/modules":              "",
				"lib/modules/6.12.0-1-amd64/kernel/net/ipv4/tcp_bbr.ko.xz": "",
				"lib/modules/6.12.0-1-amd64/kernel/net/sched/sch_fq.ko.xz": "",
				"boot/config-6.12.0-1-amd64":                               "CONFIG_MODULES=y\nCONFIG_TCP_CONG_BBR=m\nCONFIG_NET_SCH_FQ=m\n",
			},
			want: []string{"release 6.12.0-1-amd64", "proc-modules yes", "cc-available !unreadable", "dep !unreadable", "builtin !unreadable",
				"file tcp_bbr", "file sch_fq", "config-source /boot/config-6.12.0-1-amd64", "config CONFIG_TCP_CONG_BBR=m", "config-done 3"},
		},
		{
			name: "config.gz that does not decompress",
			files: map[string]string{
				"proc/sys/kernel/osrelease": "6.1.0\n",
			},
			want:   []string{"proc-modules no", "module-dir !absent", "config-source /proc/config.gz", "config-done 0"},
			absent: []string{"config CONFIG_"},
		},
	}
	for _, sh := range [][]string{{"dash"}, {"busybox", "sh"}, {"sh"}} {
		if _, err := exec.LookPath(sh[0]); err != nil {
			continue
		}
		for _, tr := range trees {
			t.Run(strings.Join(sh, "-")+"/"+tr.name, func(t *testing.T) {
				root := t.TempDir()
				writeTree(t, root, tr.files)
				if tr.name == "config.gz that does not decompress" {
					if err := os.WriteFile(filepath.Join(root, "proc/config.gz"), []byte("not gzip"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				cmd := exec.Command(sh[0], append(sh[1:], "-c", kernelCapsSection(t, root))...)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%v: %v", sh, err)
				}
				body := strings.ReplaceAll(string(out), root, "")
				body = strings.TrimPrefix(body, "XX begin kernel-caps\n")
				body = strings.TrimSuffix(body, "\nXX end kernel-caps ok\n")
				if tr.sample != "" {
					if want := parseSampleText(t, "kernel-caps/"+tr.sample); strings.TrimRight(body, "\n") != strings.TrimRight(want, "\n") {
						t.Errorf("section\n%s\nwant (%s)\n%s", body, tr.sample, want)
					}
				}
				for _, w := range tr.want {
					if !strings.Contains(body, "\n"+w) && !strings.HasPrefix(body, w) {
						t.Errorf("no %q in\n%s", w, body)
					}
				}
				for _, a := range tr.absent {
					if strings.Contains(body, a) {
						t.Errorf("%q in\n%s", a, body)
					}
				}
			})
		}
	}
}

func parseSampleText(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "parse", "testdata", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A kernel-caps section that is missing, failed or does not parse leaves
// Feasibility.Kernel nil (the planner then judges nothing on it), noted
// unless missing; one that parses fills it even without a feasibility
// section.
func TestAssembleKernelCaps(t *testing.T) {
	good := parseSampleText(t, "kernel-caps/custom-builtin-no-bbr-no-fq-reconstructed.txt")
	tests := []struct {
		name  string
		secs  map[string]remote.Section
		kind  bool               // Feasibility.Kernel set
		noted facts.SectionState // Sections[kernel-caps].State
	}{
		{"missing", map[string]remote.Section{}, false, ""},
		{"denied", map[string]remote.Section{facts.SecKernelCaps: {State: "denied", Body: "x"}}, false, "denied"},
		{"garbage", map[string]remote.Section{facts.SecKernelCaps: {State: "ok", Body: "release 6.1\nwhatever\n"}}, false, "error"},
		{"good, no feasibility section", map[string]remote.Section{facts.SecKernelCaps: {State: "ok", Body: good}}, true, ""},
		{"good, with feasibility", map[string]remote.Section{facts.SecFeasible: {State: "ok", Body: "selinux 1\n"}, facts.SecKernelCaps: {State: "ok", Body: good}}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := gather.Assemble(tt.secs, 9092)
			if got := f.Feasibility != nil && f.Feasibility.Kernel != nil; got != tt.kind {
				t.Fatalf("kernel caps set %v, want %v (%+v)", got, tt.kind, f.Feasibility)
			}
			if tt.kind && f.Feasibility.Kernel.Release != "6.1.0-kaudit" {
				t.Errorf("release %q", f.Feasibility.Kernel.Release)
			}
			if _, ok := tt.secs[facts.SecFeasible]; ok && f.Feasibility.SELinux != "enforcing" {
				t.Errorf("the feasibility section lost: %+v", f.Feasibility)
			}
			if st := f.Sections[facts.SecKernelCaps].State; st != tt.noted {
				t.Errorf("noted %q, want %q", st, tt.noted)
			}
		})
	}
}
