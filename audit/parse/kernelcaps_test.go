package parse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestKernelCaps(t *testing.T) {
	tests := []struct {
		file string
		want facts.KernelCaps
	}{
		{
			file: "linux-6.18-no-modules-config-gz-this-machine.txt",
			want: facts.KernelCaps{
				Release: "6.18.44-fc-v1045", Congestion: []string{"reno", "bbr", "cubic"}, Modules: facts.ModulesNone,
				Config: map[string]string{
					"CONFIG_TCP_CONG_ADVANCED": "y", "CONFIG_TCP_CONG_CUBIC": "y", "CONFIG_TCP_CONG_BBR": "y",
					"CONFIG_NET_SCH_HTB": "y", "CONFIG_NET_SCH_TBF": "y", "CONFIG_NET_SCH_INGRESS": "y", "CONFIG_NET_SCH_FIFO": "y",
				},
				ConfigSource: "/proc/config.gz",
			},
		},
		{
			file: "debian12-stock-modules-reconstructed.txt",
			want: facts.KernelCaps{
				Release: "6.1.0-18-amd64", Congestion: []string{"reno", "cubic"}, Modules: facts.ModulesYes,
				ModuleDir: "/lib/modules/6.1.0-18-amd64", ModuleDep: true,
				Loadable: []string{"tcp_bic", "tcp_westwood", "tcp_htcp", "tcp_highspeed", "tcp_hybla", "tcp_vegas", "tcp_nv", "tcp_veno",
					"tcp_scalable", "tcp_lp", "tcp_yeah", "tcp_illinois", "tcp_dctcp", "tcp_cdg", "tcp_bbr", "tcp_diag",
					"sch_cbq", "sch_htb", "sch_sfq", "sch_tbf", "sch_netem", "sch_fq_codel", "sch_cake", "sch_fq"},
				BuiltinRead: true, Builtin: []string{"tcp_cubic"},
				Config: map[string]string{
					"CONFIG_MODULES": "y", "CONFIG_TCP_CONG_ADVANCED": "y", "CONFIG_TCP_CONG_BIC": "m", "CONFIG_TCP_CONG_CUBIC": "y",
					"CONFIG_TCP_CONG_BBR": "m", "CONFIG_NET_SCH_HTB": "m", "CONFIG_NET_SCH_FQ_CODEL": "m", "CONFIG_NET_SCH_FQ": "m",
				},
				ConfigSource: "/boot/config-6.1.0-18-amd64",
			},
		},
		{
			// An empty modules.dep is read (nothing loadable), not unreadable.
			file: "custom-builtin-no-bbr-no-fq-reconstructed.txt",
			want: facts.KernelCaps{
				Release: "6.1.0-kaudit", Congestion: []string{"reno", "cubic"}, Modules: facts.ModulesYes,
				ModuleDir: "/lib/modules/6.1.0-kaudit", ModuleDep: true, BuiltinRead: true, Builtin: []string{"tcp_cubic"},
				Config: map[string]string{
					"CONFIG_MODULES": "y", "CONFIG_TCP_CONG_ADVANCED": "y", "CONFIG_TCP_CONG_CUBIC": "y", "CONFIG_NET_SCH_FIFO": "y",
				},
				ConfigSource: "/proc/config.gz",
			},
		},
		{
			file: "no-module-tree-no-config-reconstructed.txt",
			want: facts.KernelCaps{Release: "5.15.0-105-generic", Congestion: []string{"reno", "cubic"}, Modules: facts.ModulesYes},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := KernelCaps(readTestdata(t, "kernel-caps/"+tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
	for _, f := range allSamples(t, "kernel-caps") {
		if _, err := KernelCaps(readTestdata(t, strings.TrimPrefix(f, "testdata/"))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Lines that only part of the section came back, or that are not the
// script's, are errors or drop what they concern; never a panic.
func TestKernelCapsLines(t *testing.T) {
	head := "release 6.1.0-18-amd64\nproc-modules yes\nmodule-dir /lib/modules/6.1.0-18-amd64\n"
	tests := []struct {
		name, body string
		err        string
		check      func(*facts.KernelCaps) bool
	}{
		{"no release line", "proc-modules yes\nmodule-dir !absent\n", "want release", nil},
		{"unknown line", head + "rm -rf /\n", "unknown line", nil},
		{"bad module name", head + "dep tcp_bbr;reboot\n", "not a tcp_ or sch_ module name", nil},
		{"bad congestion name", head + "cc-available reno cu$bic\n", "not a congestion control name", nil},
		{"release with a space", "release 6.1 x\nproc-modules yes\nmodule-dir !absent\n", "not a kernel release", nil},
		{"repeated release", head + "release 6.2.0\n", "repeated", nil},
		{"config before its source", head + "config CONFIG_NET_SCH_FQ=m\n", "after config-source", nil},
		{"config value not y or m", head + "config-source /proc/config.gz\nconfig CONFIG_NET_SCH_FQ=n\n", "want CONFIG_X", nil},
		{"config cut short: no config-done", head + "config-source /proc/config.gz\nconfig CONFIG_NET_SCH_FQ=m\n", "",
			func(k *facts.KernelCaps) bool { return k.Config == nil && k.ConfigSource == "" }},
		{"zcat failed", head + "config-source /proc/config.gz\nconfig CONFIG_NET_SCH_FQ=m\nconfig-failed\nconfig-done 40\n", "",
			func(k *facts.KernelCaps) bool { return k.Config == nil }},
		{"empty config", head + "config-source /proc/config.gz\nconfig-done 0\n", "",
			func(k *facts.KernelCaps) bool { return k.Config == nil }},
		{"no zcat", head + "config-source !nozcat /proc/config.gz\n", "",
			func(k *facts.KernelCaps) bool { return k.Config == nil && k.ConfigSource == "" }},
		{"modules disabled", head + "modules-disabled 1\n", "",
			func(k *facts.KernelCaps) bool { return k.Modules == facts.ModulesDisabled }},
		{"unreadable available list", head + "cc-available !unreadable /proc/sys/net/ipv4/tcp_available_congestion_control\n", "",
			func(k *facts.KernelCaps) bool { return k.Congestion == nil }},
		{"empty available list", head + "cc-available \n", "",
			func(k *facts.KernelCaps) bool { return k.Congestion != nil && len(k.Congestion) == 0 }},
		{"modules.dep unreadable, files found", head + "dep !unreadable /lib/modules/6.1.0-18-amd64/modules.dep\nfile tcp_bbr\n", "",
			func(k *facts.KernelCaps) bool {
				return !k.ModuleDep && k.Loadable == nil && reflect.DeepEqual(k.Files, []string{"tcp_bbr"})
			}},
		{"no module tree", "release 6.1.0\nproc-modules no\nmodule-dir !absent\n", "",
			func(k *facts.KernelCaps) bool {
				return k.ModuleDir == "" && !k.ModuleDep && k.Modules == facts.ModulesNone
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := KernelCaps(tt.body)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if k != nil {
					t.Errorf("facts %+v with an error", k)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(k) {
				t.Errorf("got %+v", *k)
			}
		})
	}
}
