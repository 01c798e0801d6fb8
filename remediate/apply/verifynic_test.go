package apply

import (
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate"
)

// TestVerifyNICBoot: a persisted NIC change is verified against what the
// re-gathered host sets at boot, not only against the running value.
func TestVerifyNICBoot(t *testing.T) {
	persistOnly := remediate.Change{Kind: remediate.KindNICOffload, Target: "eth0 gro", From: "on", To: "on", Persist: true, PersistPath: remediate.NICPersistPath}
	runtimeOnly := persistOnly
	runtimeOnly.Persist, runtimeOnly.Runtime, runtimeOnly.PersistPath = false, true, ""
	nm := persistOnly
	nm.PersistPath, nm.NM = `NetworkManager connection "eth0"`, "16b7676e-40b8-3b51-b414-7d7c32c7969a"
	udevGRO := &facts.NICBoot{Settings: map[string]facts.NICBootValue{"gro": {Value: "on", Mechanism: facts.PersistUdev, Source: remediate.NICPersistPath + ":3"}}}
	linkOff := &facts.NICBoot{Settings: map[string]facts.NICBootValue{"gro": {Value: "off", Mechanism: facts.PersistSystemdLink, Source: "/run/systemd/network/10-netplan-eth0.link:11"}}}
	for _, tc := range []struct {
		name string
		c    remediate.Change
		on   bool
		boot *facts.NICBoot
		want string
	}{
		{"persisted and running", persistOnly, true, udevGRO, ""},
		{"boot not gathered: running value only", persistOnly, true, nil, ""},
		{"nothing sets it", persistOnly, true, &facts.NICBoot{}, "eth0 gro: nothing sets it at boot after the change (want on from /etc/udev/rules.d/99-kaudit-ethtool.rules)"},
		{"NetworkManager: nothing sets it", nm, true, &facts.NICBoot{}, `eth0 gro: nothing sets it at boot after the change (want on from NetworkManager connection "eth0")`},
		{"another value wins", persistOnly, true, linkOff, "eth0 gro: /run/systemd/network/10-netplan-eth0.link:11 sets off at boot, want on from /etc/udev/rules.d/99-kaudit-ethtool.rules"},
		{"runtime only: boot not checked", runtimeOnly, true, &facts.NICBoot{}, ""},
		{"not running", persistOnly, false, udevGRO, "eth0 gro is off, want on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &facts.Facts{NICs: []facts.NIC{{Name: "eth0", Features: map[string]facts.Feature{"gro": {On: tc.on}}, Boot: tc.boot}}}
			if got := verifyNIC(f, tc.c); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
