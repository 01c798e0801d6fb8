package remediate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// TestPlanNICPersistOnly: nic-persisted's warning plans persist-only NIC
// changes (Runtime false) through the mechanism kaudit would use; a
// runtime request for the same target (nic-ring) makes it runtime+persist;
// a value the NIC does not run any more is not persisted.
func TestPlanNICPersistOnly(t *testing.T) {
	const mac = "52:54:00:aa:bb:cc"
	warn := func(fx map[string]map[string]string) rules.Finding {
		return rules.Finding{Rule: rules.RuleNICPersisted, Status: rules.Warn, Severity: rules.Low,
			Fix: &rules.Fix{NICPersist: fx, WhenWarn: true}}
	}
	onHost := func(f *facts.Facts) { f.NICs[0].Features["gro"] = facts.Feature{On: true}; f.NICs[0].Ring.RX = 4096 }
	for _, tc := range []struct {
		name     string
		persist  *facts.NICPersist
		findings []rules.Finding
		want     []Change
		warning  string
	}{
		{name: "udev", findings: []rules.Finding{warn(map[string]map[string]string{"eth0": {"gro": "on", "rx": "4096"}})},
			want: []Change{
				{Host: "b1", Rules: []string{"nic-persisted"}, Kind: KindNICOffload, Target: "eth0 gro", From: "on", To: "on", Persist: true, PersistPath: NICPersistPath,
					Note: "already on now, but not what the host sets at boot: persisted only (the running NIC is not touched)"},
				{Host: "b1", Rules: []string{"nic-persisted"}, Kind: KindNICRing, Target: "eth0 rx", From: "4096", To: "4096", Persist: true, PersistPath: NICPersistPath,
					Note: "already 4096 now, but not what the host sets at boot: persisted only (the running NIC is not touched)"},
			}},
		{name: "systemd .link", persist: &facts.NICPersist{Mechanism: facts.PersistSystemdLink, MAC: mac},
			findings: []rules.Finding{warn(map[string]map[string]string{"eth0": {"gro": "on"}})},
			want: []Change{{Host: "b1", Rules: []string{"nic-persisted"}, Kind: KindNICOffload, Target: "eth0 gro", From: "on", To: "on", Persist: true,
				PersistPath: LinkPath("eth0"), PersistMatch: "MACAddress=" + mac + " Driver=ixgbe",
				Note: "already on now, but not what the host sets at boot: persisted only (the running NIC is not touched)\npersisted in /etc/systemd/network/10-kaudit-eth0.link (matched by MAC address and driver): systemd applies it when the interface next appears (reboot, or udevadm trigger); if the NIC's driver is in the initramfs, rebuild it"}}},
		{name: "a runtime request for the same target wins", findings: []rules.Finding{
			fail("nic-ring", rules.Fix{NIC: map[string]map[string]string{"eth0": {"tx": "2048"}}}),
			warn(map[string]map[string]string{"eth0": {"rx": "4096"}}),
		}, want: []Change{
			{Host: "b1", Rules: []string{"nic-persisted"}, Kind: KindNICRing, Target: "eth0 rx", From: "4096", To: "4096", Persist: true, PersistPath: NICPersistPath,
				Note: "already 4096 now, but not what the host sets at boot: persisted only (the running NIC is not touched)"},
			{Host: "b1", Rules: []string{"nic-ring"}, Kind: KindNICRing, Target: "eth0 tx", From: "512", To: "2048", Runtime: true, Persist: true, PersistPath: NICPersistPath,
				Note: "changing ring sizes resets the NIC on many drivers (a brief link drop)\n2048 is the NIC's pre-set maximum"},
		}},
		{name: "no longer running that value", findings: []rules.Finding{warn(map[string]map[string]string{"eth0": {"tso": "off"}})},
			warning: "nic-persisted: eth0 tso is not off now: not persisted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := nicPersistFacts(tc.persist)
			onHost(f)
			p := PlanHost("b1", f, tc.findings, Selector{})
			if !reflect.DeepEqual(p.Changes, append([]Change{}, tc.want...)) {
				t.Errorf("changes:\n got %+v\nwant %+v", p.Changes, tc.want)
			}
			if tc.warning != "" && !hasText(p.Warnings, tc.warning) {
				t.Errorf("warnings %q, want %q", p.Warnings, tc.warning)
			}
			if len(tc.want) > 0 {
				var b strings.Builder
				RenderPlan(&b, []HostPlan{p}, PlanOptions{})
				if !strings.Contains(b.String(), "persist only") {
					t.Errorf("plan does not say persist only:\n%s", b.String())
				}
			}
		})
	}
}

// TestNICOffloadAgreesWithPlan: what the plan lists as "cannot apply" is
// what nic-offload reports as "the NIC cannot", with the same reason (one
// decision: rules.OffloadBlocked); no planned change is left for it.
func TestNICOffloadAgreesWithPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		feats map[string]facts.Feature
	}{
		{"tso: fixed dependencies", map[string]facts.Feature{"tso": {}, "gso": {On: true}, "gro": {On: true}, "scatter-gather": {Fixed: true}, "tx-checksumming": {Fixed: true}}},
		{"gro requested on", map[string]facts.Feature{"tso": {On: true}, "gso": {On: true}, "gro": {Requested: "on"}}},
		{"gso needs scatter-gather off", map[string]facts.Feature{"tso": {On: true}, "gso": {}, "gro": {On: true}, "scatter-gather": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := hostFacts()
			f.NICs[0].Features = tc.feats
			var fd rules.Finding
			fs := rules.Evaluate(f, rules.DefaultProfile())
			for _, x := range fs {
				if x.Rule == "nic-offload" {
					fd = x
				}
			}
			if fd.Status != rules.Warn || !strings.HasPrefix(fd.Reason, "the NIC cannot: eth0 ") {
				t.Fatalf("nic-offload %s %q", fd.Status, fd.Reason)
			}
			p := PlanHost("b1", f, fs, Selector{Rules: []string{"nic-offload"}})
			if len(p.Changes) != 0 || len(p.Infeasible) != 1 {
				t.Fatalf("changes %+v cannot %+v", p.Changes, p.Infeasible)
			}
			no := p.Infeasible[0]
			if !strings.Contains(fd.Reason, "eth0 "+no.Reason+" ("+no.Instead+")") {
				t.Errorf("rule %q\nplan %q (%q)", fd.Reason, no.Reason, no.Instead)
			}
		})
	}
}
