package remediate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/rules"
)

// parseSample reads a capture of package parse's testdata.
func parseSample(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "audit", "parse", "testdata", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// capturedFeatures is an ethtool -k capture as the gather keeps it: the
// top-level lines and the children the dependencies are decided on.
func capturedFeatures(t *testing.T, rel string) map[string]facts.Feature {
	t.Helper()
	var kept []string
	for _, l := range strings.Split(parseSample(t, rel), "\n") {
		if !strings.HasPrefix(l, "\t") {
			kept = append(kept, l)
			continue
		}
		for _, c := range []string{"tx-checksum-ipv4:", "tx-checksum-ip-generic:", "tx-checksum-ipv6:", "tx-scatter-gather:", "tx-tcp-segmentation:", "tx-tcp6-segmentation:"} {
			if strings.HasPrefix(l, "\t"+c) {
				kept = append(kept, l)
			}
		}
	}
	fs, err := parse.EthtoolFeatures(strings.Join(kept, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func capturedCaps(t *testing.T, file string, extra ...string) *facts.KernelCaps {
	t.Helper()
	k, err := parse.KernelCaps(parseSample(t, "kernel-caps/"+file) + "\n" + strings.Join(extra, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const (
	keyCC = "net.ipv4.tcp_congestion_control"
	keyQD = "net.core.default_qdisc"
)

var (
	congestionF = fail("congestion-control", rules.Fix{Sysctl: map[string]string{keyCC: "bbr", keyQD: "fq"}})
	offloadOnF  = func(ifc string) rules.Finding {
		return fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{ifc: {"gso": "on", "tso": "on", "gro": "on"}}})
	}
)

// What the kernel and the NIC allow, decided on captured output (package
// parse's testdata): each case says what must be planned and what must be
// listed as impossible, with the reason's exact words where they matter.
func TestPlanKernelAndNICLimits(t *testing.T) {
	virtio := func(t *testing.T) facts.NIC {
		fs := capturedFeatures(t, "ethtool-k/virtio_net-no-csum-debian12-reconstructed.txt")
		gro := fs["gro"]
		gro.On = false // so that gro has something to plan
		fs["gro"] = gro
		return facts.NIC{Name: "enp0s2", Driver: "virtio_net", Ring: &facts.Ring{RXMax: 256, TXMax: 256, RX: 256, TX: 256}, Features: fs}
	}
	tests := []struct {
		name     string
		edit     func(t *testing.T, f *facts.Facts)
		findings []rules.Finding
		planned  []string          // targets planned
		cannot   map[string]string // target → a part of its reason ("" : any)
		note     map[string]string // planned target → a part of its note
		instead  map[string]string // impossible target → a part of what to do instead
	}{
		{
			name:     "virtio tx-checksumming off [fixed]: gso and tso impossible, gro planned",
			edit:     func(t *testing.T, f *facts.Facts) { f.NICs = []facts.NIC{virtio(t)} },
			findings: []rules.Finding{offloadOnF("enp0s2")},
			planned:  []string{"enp0s2 gro"},
			cannot: map[string]string{
				"enp0s2 gso": "gso cannot be turned on: it needs scatter-gather, which is off [fixed] by the virtio_net driver (it offers scatter-gather only with tx-checksumming, off [fixed] too: the device has no checksum offload)",
				"enp0s2 tso": "tso cannot be turned on: it is off [fixed] by the virtio_net driver, and it needs scatter-gather and tx-checksumming, which are off [fixed] too",
			},
			instead: map[string]string{"enp0s2 gso": "virtio-net device's csum feature"},
		},
		{
			name:     "virtio ring at its pre-set maximum 256: nothing to plan",
			edit:     func(t *testing.T, f *facts.Facts) { f.NICs = []facts.NIC{virtio(t)} },
			findings: []rules.Finding{fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"enp0s2": {"rx": "4096", "tx": "4096"}}})},
		},
		{
			name: "ring above the maximum is capped at it",
			edit: func(t *testing.T, f *facts.Facts) {
				f.NICs = []facts.NIC{{Name: "eno1", Driver: "e1000e", Ring: &facts.Ring{RXMax: 4096, TXMax: 4096, RX: 256, TX: 256}, Features: map[string]facts.Feature{}}}
			},
			findings: []rules.Finding{fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"eno1": {"rx": "8192"}}})},
			planned:  []string{"eno1 rx"},
			note:     map[string]string{"eno1 rx": "4096 is the NIC's pre-set maximum"},
		},
		{
			name: "ring maximum 0: impossible",
			edit: func(t *testing.T, f *facts.Facts) {
				f.NICs = []facts.NIC{{Name: "eth0", Driver: "vmxnet3", Ring: &facts.Ring{RXMax: 0, TXMax: 0, RX: 0, TX: 0}, Features: map[string]facts.Feature{}}}
			},
			findings: []rules.Finding{fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"eth0": {"tx": "4096"}}})},
			cannot:   map[string]string{"eth0 tx": "eth0 reports no tx ring maximum (Pre-set maximums TX: 0)"},
		},
		{
			name: "gso off [requested on] with scatter-gather off: not alone (veth capture)",
			edit: func(t *testing.T, f *facts.Facts) {
				f.NICs = []facts.NIC{{Name: "veth-c", Driver: "veth", Features: capturedFeatures(t, "ethtool-k/veth-sg-off-ethtool6.1-this-machine.txt")}}
			},
			findings: []rules.Finding{fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"veth-c": {"gso": "on"}}})},
			cannot:   map[string]string{"veth-c gso": "gso cannot be turned on alone: it needs scatter-gather, which is off (the kernel drops gso without scatter-gather)"},
			instead:  map[string]string{"veth-c gso": "ethtool -K veth-c sg on gso on"},
		},
		{
			name: "tso with a checksum the kernel refuses (tap capture)",
			edit: func(t *testing.T, f *facts.Facts) {
				f.NICs = []facts.NIC{{Name: "tap1", Driver: "tun", Features: capturedFeatures(t, "ethtool-k/tap-fresh-ethtool6.1-this-machine.txt")}}
			},
			findings: []rules.Finding{fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"tap1": {"tso": "on", "gso": "on"}}})},
			cannot:   map[string]string{"tap1 tso": "it needs tx-checksumming (tx-checksum-ip-generic: off [requested on]), which the kernel keeps off although on was requested"},
		},
		{
			name: "gso itself [requested on], dependencies on: the kernel refuses it",
			edit: func(t *testing.T, f *facts.Facts) {
				f.NICs = []facts.NIC{{Name: "bond0", Driver: "bonding", Features: map[string]facts.Feature{
					"scatter-gather": {On: true}, "tx-checksumming": {On: true}, "gso": {Requested: "on"}}}}
			},
			findings: []rules.Finding{fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"bond0": {"gso": "on"}}})},
			cannot:   map[string]string{"bond0 gso": "gso cannot be turned on: the kernel keeps it off although on was requested (gso: off [requested on])"},
		},
		{
			name: "gso off with scatter-gather on: planned (virtio with checksum offload, this machine)",
			edit: func(t *testing.T, f *facts.Facts) {
				fs := capturedFeatures(t, "ethtool-k/virtio_net-ethtool6.1-this-machine.txt")
				fs["gso"] = facts.Feature{}
				f.NICs = []facts.NIC{{Name: "eth0", Driver: "virtio_net", Features: fs}}
			},
			findings: []rules.Finding{fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"eth0": {"gso": "on"}}})},
			planned:  []string{"eth0 gso"},
		},
		{
			name: "bbr not available but a module: planned, the module loads on write",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Feasibility.Kernel = capturedCaps(t, "debian12-stock-modules-reconstructed.txt")
			},
			findings: []rules.Finding{congestionF},
			planned:  []string{keyCC, keyQD},
			note: map[string]string{
				keyCC: `tcp_bbr is a module of kernel 6.1.0-18-amd64, not loaded now: writing the sysctl loads it (the kernel calls request_module("tcp_bbr")`,
				keyQD: `sch_fq is a module of kernel 6.1.0-18-amd64, not loaded now: writing the sysctl loads it (the kernel calls request_module("sch_fq")`,
			},
		},
		{
			name: "bbr and fq neither available nor loadable (the custom kernel): impossible",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Feasibility.Kernel = capturedCaps(t, "custom-builtin-no-bbr-no-fq-reconstructed.txt")
			},
			findings: []rules.Finding{congestionF},
			cannot: map[string]string{
				keyCC: "bbr: not in tcp_available_congestion_control (reno cubic) and no tcp_bbr module for kernel 6.1.0-kaudit (/lib/modules/6.1.0-kaudit/modules.dep lists none); CONFIG_TCP_CONG_BBR is not set in /proc/config.gz",
				keyQD: "fq: not built in and no sch_fq module for kernel 6.1.0-kaudit (/lib/modules/6.1.0-kaudit/modules.dep lists none); CONFIG_NET_SCH_FQ is not set in /proc/config.gz",
			},
			instead: map[string]string{keyCC: "install and boot a kernel with CONFIG_TCP_CONG_BBR"},
		},
		{
			name: "no module tree, no config: fq and bbr cannot be confirmed",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Feasibility.Kernel = capturedCaps(t, "no-module-tree-no-config-reconstructed.txt")
			},
			findings: []rules.Finding{congestionF},
			cannot: map[string]string{
				keyQD: "cannot confirm the kernel has sch_fq: no /lib/modules/5.15.0-105-generic and no /proc/config.gz",
				keyCC: "cannot confirm the kernel has tcp_bbr: not in tcp_available_congestion_control (reno cubic), no /lib/modules/5.15.0-105-generic and no /proc/config.gz",
			},
			instead: map[string]string{keyQD: "modprobe -n -v sch_fq"},
		},
		{
			name: "fq built in (modules.builtin): planned without a note",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Feasibility.Kernel = capturedCaps(t, "custom-builtin-no-bbr-no-fq-reconstructed.txt", "builtin sch_fq")
			},
			findings: []rules.Finding{congestionF},
			planned:  []string{keyQD},
			note:     map[string]string{keyQD: ""},
			cannot:   map[string]string{keyCC: "no tcp_bbr module"},
		},
		{
			name: "this machine: bbr registered, fq neither built in nor loadable (no CONFIG_MODULES)",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Feasibility.Kernel = capturedCaps(t, "linux-6.18-no-modules-config-gz-this-machine.txt")
			},
			findings: []rules.Finding{congestionF},
			planned:  []string{keyCC},
			cannot: map[string]string{
				keyQD: "fq: not built in and kernel 6.18.44-fc-v1045 cannot load modules (built without CONFIG_MODULES: no /proc/modules); CONFIG_NET_SCH_FQ is not set in /proc/config.gz",
			},
		},
		{
			name: "bbr a module but module loading switched off",
			edit: func(t *testing.T, f *facts.Facts) {
				k := capturedCaps(t, "debian12-stock-modules-reconstructed.txt")
				k.Modules = facts.ModulesDisabled
				f.Feasibility.Kernel = k
			},
			findings: []rules.Finding{congestionF},
			cannot: map[string]string{
				keyCC: "bbr: not in tcp_available_congestion_control (reno cubic) and kernel 6.1.0-18-amd64 has module loading switched off (kernel.modules_disabled = 1, until the next boot)",
				keyQD: "sch_fq: kernel 6.1.0-18-amd64 has module loading switched off",
			},
		},
		{
			name:     "no kernel facts: planned as before",
			findings: []rules.Finding{congestionF},
			planned:  []string{keyCC, keyQD},
		},
		{
			name: "the value the kernel runs already: a persist-only change needs nothing of it",
			edit: func(t *testing.T, f *facts.Facts) {
				f.Sysctl[keyQD] = "fq"
				f.Feasibility.Kernel = capturedCaps(t, "no-module-tree-no-config-reconstructed.txt")
			},
			findings: []rules.Finding{fail("congestion-control", rules.Fix{Sysctl: map[string]string{keyQD: "fq"}})},
			planned:  []string{keyQD},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := feasibleHost()
			f.Sysctl[keyCC], f.Sysctl[keyQD] = "cubic", "pfifo_fast"
			f.Feasibility.SysctlModes[keyCC], f.Feasibility.SysctlModes[keyQD] = "-rw-r--r--", "-rw-r--r--"
			if tt.edit != nil {
				tt.edit(t, f)
			}
			p := PlanHost("b1", f, tt.findings, Selector{})
			got := map[string]Change{}
			for _, c := range p.Changes {
				got[c.Target] = c
			}
			for _, target := range tt.planned {
				c, ok := got[target]
				if !ok {
					t.Errorf("%s not planned; plan %+v", target, p)
					continue
				}
				if want, ok := tt.note[target]; ok && (want == "" && strings.Contains(c.Note, "module") || !strings.Contains(c.Note, want)) {
					t.Errorf("%s note %q, want %q", target, c.Note, want)
				}
				delete(got, target)
			}
			for target := range got {
				t.Errorf("%s planned, not expected", target)
			}
			if len(p.Infeasible) != len(tt.cannot) {
				t.Errorf("impossible: %+v, want %d", p.Infeasible, len(tt.cannot))
			}
			for _, no := range p.Infeasible {
				want, ok := tt.cannot[no.Target]
				switch {
				case !ok:
					t.Errorf("%s listed impossible: %s", no.Target, no.Reason)
				case !strings.Contains(no.Reason, want):
					t.Errorf("%s reason\n%q\nwant it to contain\n%q", no.Target, no.Reason, want)
				case no.Instead == "" || !strings.Contains(no.Instead, tt.instead[no.Target]):
					t.Errorf("%s instead %q, want %q", no.Target, no.Instead, tt.instead[no.Target])
				}
			}
		})
	}
}

// The lead's Debian 12 guest as a golden plan: a virtio NIC without
// checksum offload (ring maximum 256), an e1000e NIC with TSO switched
// off, a kernel with neither bbr nor fq (CONFIG_MODULES=y,
// modules.builtin, /proc/config.gz).
func TestPlanDebian12GuestGolden(t *testing.T) {
	f := feasibleHost()
	f.Sysctl[keyCC], f.Sysctl[keyQD] = "cubic", "pfifo_fast"
	f.Feasibility.Kernel = capturedCaps(t, "custom-builtin-no-bbr-no-fq-reconstructed.txt")
	f.Feasibility.Dirs["/etc/systemd/network"] = facts.Dir{Exists: true, Mode: "drwxr-xr-x", Writable: true, Mount: "/", FSType: "ext4"}
	vf := capturedFeatures(t, "ethtool-k/virtio_net-no-csum-debian12-reconstructed.txt")
	e1000e := map[string]facts.Feature{
		"tx-checksumming": {On: true}, "tx-checksum-ipv4": {On: true}, "tx-checksum-ipv6": {On: true}, "tx-checksum-ip-generic": {Fixed: true},
		"scatter-gather": {On: true}, "tx-scatter-gather": {On: true},
		"tso": {}, "tx-tcp-segmentation": {}, "tx-tcp6-segmentation": {}, "gso": {On: true}, "gro": {On: true}, "lro": {Fixed: true},
	}
	f.NICs = []facts.NIC{
		{Name: "enp0s2", Driver: "virtio_net", Ring: &facts.Ring{RXMax: 256, TXMax: 256, RX: 256, TX: 256}, Features: vf},
		{Name: "enp0s3", Driver: "e1000e", Ring: &facts.Ring{RXMax: 4096, TXMax: 4096, RX: 256, TX: 256}, Features: e1000e},
	}
	findings := []rules.Finding{
		congestionF,
		fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"enp0s2": {"rx": "4096", "tx": "4096"}, "enp0s3": {"rx": "4096", "tx": "4096"}}}),
		fail("nic-offload", rules.Fix{NIC: map[string]map[string]string{"enp0s2": {"gso": "on", "tso": "on"}, "enp0s3": {"tso": "on"}}}),
	}
	p := PlanHost("debian12", f, findings, Selector{})
	var buf bytes.Buffer
	RenderPlan(&buf, []HostPlan{p}, PlanOptions{})
	checkGolden(t, filepath.Join("testdata", "feasible-debian12-virtio-no-bbr-no-fq.golden"), buf.Bytes(), "TestPlanDebian12GuestGolden")
	// Of 11 asked-for changes, the ones the guest cannot take are listed,
	// never planned: 4 rings and offloads on the e1000e (rx, tx, tso) plan.
	if len(p.Changes) != 3 || len(p.Infeasible) != 4 {
		t.Errorf("%d changes, %d impossible: %+v", len(p.Changes), len(p.Infeasible), p)
	}
}
