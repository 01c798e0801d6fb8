package rules

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func TestNICPersisted(t *testing.T) {
	boot := func(f *facts.Facts, setting string, v facts.NICBootValue) {
		if v.Value == "" {
			delete(f.NICs[0].Boot.Settings, setting)
			return
		}
		f.NICs[0].Boot.Settings[setting] = v
	}
	only := func(setting, value string) func(*testing.T, Finding) {
		return func(t *testing.T, fd Finding) {
			want := map[string]map[string]string{"eth0": {setting: value}}
			if fd.Fix == nil || !reflect.DeepEqual(fd.Fix.NICPersist, want) || fd.Fix.NIC != nil || !fd.Fix.WhenWarn {
				t.Errorf("fix %+v, want persist-only %v", fd.Fix, want)
			}
		}
	}
	const nothingGRO = "nothing on the host sets eth0 gro at boot: if it was set at runtime (by hand, or by an interrupted run) it reverts at the next reboot to the driver's default"
	runRuleCases(t, RuleNICPersisted, []ruleCase{
		{name: "persisted by .link", status: Pass, reason: "all 5 compliant NIC settings are set at boot",
			check: func(t *testing.T, fd Finding) {
				if fd.Fix != nil || fd.Observed != "eth0 rx 4096 (/etc/systemd/network/10-kaudit-eth0.link:15), eth0 tx 4096 (/etc/systemd/network/10-kaudit-eth0.link:16), eth0 tso on (/etc/systemd/network/10-kaudit-eth0.link:17), eth0 gso on (/etc/systemd/network/10-kaudit-eth0.link:18), eth0 gro on (/etc/systemd/network/10-kaudit-eth0.link:14)" {
					t.Errorf("fix %+v observed %q", fd.Fix, fd.Observed)
				}
			}},
		{name: "gro persisted by udev", mutate: func(f *facts.Facts) {
			boot(f, "gro", facts.NICBootValue{Value: "on", Mechanism: facts.PersistUdev, Source: "/etc/udev/rules.d/99-kaudit-ethtool.rules:3"})
		}, status: Pass, reason: "all 5"},
		{name: "gro persisted by NetworkManager", mutate: func(f *facts.Facts) {
			boot(f, "gro", facts.NICBootValue{Value: "on", Mechanism: facts.PersistNetworkManager, Source: `NetworkManager connection "eth0"`})
		}, status: Pass, reason: "all 5"},
		{name: "gro persisted by ifupdown", mutate: func(f *facts.Facts) {
			boot(f, "gro", facts.NICBootValue{Value: "on", Mechanism: facts.PersistIfupdown, Source: "/etc/network/interfaces:13"})
		}, status: Pass, reason: "all 5"},
		{name: "ring max in a .link", mutate: func(f *facts.Facts) {
			boot(f, "rx", facts.NICBootValue{Value: "max", Mechanism: facts.PersistSystemdLink, Source: "/etc/systemd/network/10-x.link:5"})
		}, status: Pass, reason: "all 5"},
		{name: "gro: nothing sets it", mutate: func(f *facts.Facts) { boot(f, "gro", facts.NICBootValue{}) },
			status: Warn, sev: Low, reason: nothingGRO, check: only("gro", "on")},
		{name: "nothing, with an unsettled rule", mutate: func(f *facts.Facts) {
			boot(f, "gro", facts.NICBootValue{})
			f.NICs[0].Boot.Unsure = []string{"/etc/udev/rules.d/80-x.rules:2: udev match ENV{ID_BUS} not evaluated by kaudit: the rule may set gro on"}
		}, status: Warn, reason: nothingGRO + " (not settled: /etc/udev/rules.d/80-x.rules:2: udev match ENV{ID_BUS} not evaluated by kaudit: the rule may set gro on)"},
		{name: "a mechanism sets a different offload", mutate: func(f *facts.Facts) {
			boot(f, "gro", facts.NICBootValue{Value: "off", Mechanism: facts.PersistSystemdLink, Source: "/run/systemd/network/10-netplan-eth0.link:11"})
		}, status: Fail, reason: "eth0 gro: running on, but /run/systemd/network/10-netplan-eth0.link:11 sets off at boot: the next reboot changes them", check: only("gro", "on")},
		{name: "a mechanism sets a smaller ring", mutate: func(f *facts.Facts) {
			boot(f, "rx", facts.NICBootValue{Value: "512", Mechanism: facts.PersistUdev, Source: "/etc/udev/rules.d/70-nic.rules:4"})
			boot(f, "tx", facts.NICBootValue{})
		}, status: Fail, reason: "eth0 rx: running 4096, but /etc/udev/rules.d/70-nic.rules:4 sets 512 at boot: the next reboot changes them (also: nothing on the host sets eth0 tx at boot",
			check: func(t *testing.T, fd Finding) {
				if want := map[string]map[string]string{"eth0": {"rx": "4096", "tx": "4096"}}; !reflect.DeepEqual(fd.Fix.NICPersist, want) {
					t.Errorf("fix %+v", fd.Fix.NICPersist)
				}
			}},
		{name: "a larger ring at boot still meets the target", mutate: func(f *facts.Facts) {
			boot(f, "rx", facts.NICBootValue{Value: "8192", Mechanism: facts.PersistUdev, Source: "/etc/udev/rules.d/70-nic.rules:4"})
		}, status: Pass, reason: "all 5"},
		{name: "gro off: nic-offload's, not checked", mutate: func(f *facts.Facts) {
			f.NICs[0].Features["gro"] = facts.Feature{On: false}
			boot(f, "gro", facts.NICBootValue{})
		}, status: Pass, reason: "all 4"},
		{name: "small running ring: nic-ring's, not checked", mutate: func(f *facts.Facts) {
			f.NICs[0].Ring.RX = 512
			boot(f, "rx", facts.NICBootValue{})
		}, status: Pass, reason: "all 4"},
		{name: "gro on [fixed] cannot revert", mutate: func(f *facts.Facts) {
			f.NICs[0].Features["gro"] = facts.Feature{On: true, Fixed: true}
			boot(f, "gro", facts.NICBootValue{})
		}, status: Pass, reason: "all 4"},
		{name: "boot not gathered", mutate: func(f *facts.Facts) { f.NICs[0].Boot = nil }, status: Unknown, reason: "what the host sets on eth0 at boot was not gathered"},
		{name: "no NICs", mutate: func(f *facts.Facts) { f.NICs = nil }, status: Unknown, reason: "not gathered"},
		{name: "nothing compliant yet", mutate: func(f *facts.Facts) {
			f.NICs[0].Ring = nil
			f.NICs[0].Features = map[string]facts.Feature{"gro": {On: false}}
		}, status: Skip, reason: "no NIC ring or offload meets its target yet"},
	})
}
