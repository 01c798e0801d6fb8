package parse

import (
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// nicSection is a nics section as gather.sh prints it, with the
// persistence lines of npersist after each interface's features.
const nicHead = "@if eth0\n@driver ixgbe\n@ring\nRing parameters for eth0:\nPre-set maximums:\nRX:\t\t4096\nTX:\t\t4096\nCurrent hardware settings:\nRX:\t\t512\nTX:\t\t512\n\n@features\nFeatures for eth0:\ngeneric-receive-offload: off\n"

// The nmcli lines are what `nmcli -t -g GENERAL.STATE device show eth0`
// and `... -g GENERAL.CONNECTION ...` print: the value only, ':' and '\'
// escaped with '\' in terse mode. The state strings ("100 (connected)",
// "100 (connected (externally))", "20 (unavailable)", "10 (unmanaged)")
// are reconstructed from the nmcli man page and NMDeviceState, matching
// captured `nmcli -t device show` output (GENERAL.STATE:100 (connected),
// GENERAL.CONNECTION:Wired connection 1) found in public test fixtures.
func TestParseNICPersist(t *testing.T) {
	link := "@link-default /usr/lib/systemd/network/99-default.link\n@udev-version 245\n@link-dir /etc/systemd/network\n"
	for _, tc := range []struct {
		name, lines string
		want        facts.NICPersist
	}{
		{"nothing: udev", "@mac 52:54:00:AA:bb:cc\n",
			facts.NICPersist{Mechanism: "udev", MAC: "52:54:00:aa:bb:cc"}},
		{"systemd link support", "@mac 52:54:00:aa:bb:cc\n" + link,
			facts.NICPersist{Mechanism: "systemd-link", MAC: "52:54:00:aa:bb:cc"}},
		{"NetworkManager connected", "@mac 52:54:00:aa:bb:cc\n@nm-version 1.30.0\n@nm-state 100 (connected)\n@nm-connection Wired connection 1\n@nm-uuid 16B7676E-40b8-3b51-b414-7d7c32c7969a\n@ifup /usr/sbin/ifup\n@ifcfg /etc/sysconfig/network-scripts/ifcfg-eth0\n" + link,
			facts.NICPersist{Mechanism: "networkmanager", Connection: "Wired connection 1", ConnectionUUID: "16b7676e-40b8-3b51-b414-7d7c32c7969a", NMVersion: "1.30.0", MAC: "52:54:00:aa:bb:cc"}},
		{"NetworkManager escaped name", "@nm-version 1.22.8\n@nm-state 100 (connected)\n@nm-connection a\\:b\\\\c\n@nm-uuid not-a-uuid\n",
			facts.NICPersist{Mechanism: "networkmanager", Connection: `a:b\c`, NMVersion: "1.22.8"}},
		{"NetworkManager unmanaged: ifcfg", "@nm-version 1.30.0\n@nm-state 10 (unmanaged)\n@nm-connection \n@ifup /usr/sbin/ifup\n@ifcfg /etc/sysconfig/network-scripts/ifcfg-eth0\n@ifcfg-opts 7:ETHTOOL_OPTS=\"-K eth0 tso off\"\n" + link,
			facts.NICPersist{Mechanism: "ifcfg", File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 7, EthtoolOpts: "-K eth0 tso off", NMVersion: "1.30.0"}},
		{"NetworkManager connected externally: not its own", "@nm-version 1.30.0\n@nm-state 100 (connected (externally))\n@nm-connection eth0\n" + link,
			facts.NICPersist{Mechanism: "systemd-link", NMVersion: "1.30.0"}},
		{"NetworkManager disconnected, no connection", "@nm-version 1.30.0\n@nm-state 30 (disconnected)\n@nm-connection \n",
			facts.NICPersist{Mechanism: "udev", NMVersion: "1.30.0"}},
		{"NetworkManager not running", "@nm-version 1.30.0\n@nm-state \n@nm-connection \n",
			facts.NICPersist{Mechanism: "udev", NMVersion: "1.30.0"}},
		{"ifcfg without ETHTOOL_OPTS", "@ifup /sbin/ifup\n@ifcfg /etc/sysconfig/network-scripts/ifcfg-eth0\n",
			facts.NICPersist{Mechanism: "ifcfg", File: "/etc/sysconfig/network-scripts/ifcfg-eth0"}},
		{"ifcfg without ifup: dead file", "@ifcfg /etc/sysconfig/network-scripts/ifcfg-eth0\n" + link,
			facts.NICPersist{Mechanism: "systemd-link"}},
		{"ifupdown over systemd-link", "@ifup /sbin/ifup\n@iface 9 /etc/network/interfaces\n@iface 3 /etc/network/interfaces.d/eth0 cfg\n" + link,
			facts.NICPersist{Mechanism: "ifupdown", File: "/etc/network/interfaces", Line: 9}},
		{"ifupdown in interfaces.d", "@ifup /sbin/ifup\n@iface 3 /etc/network/interfaces.d/50-eth0\n",
			facts.NICPersist{Mechanism: "ifupdown", File: "/etc/network/interfaces.d/50-eth0", Line: 3}},
		{"existing .link matches by MAC", "@mac 52:54:00:aa:bb:cc\n" + link + "@link /etc/systemd/network/10-kaudit-eth0.link\n@link-key MACAddress=52:54:00:aa:bb:cc\n@link /etc/systemd/network/50-other.link\n@link-key OriginalName=wlan*\n@link /run/systemd/network/10-netplan-eth0.link\n@link-key MACAddress=52:54:00:AA:BB:CC\n",
			facts.NICPersist{Mechanism: "systemd-link", File: "/run/systemd/network/10-netplan-eth0.link", MAC: "52:54:00:aa:bb:cc"}},
		{"existing .link matches by name glob", link + "@link /etc/systemd/network/05-eth.link\n@link-key OriginalName=eth*\n",
			facts.NICPersist{Mechanism: "systemd-link", File: "/etc/systemd/network/05-eth.link"}},
		{"existing .link matches by driver", link + "@link /etc/systemd/network/05-ixgbe.link\n@link-key Driver=ixgbe i40e\n",
			facts.NICPersist{Mechanism: "systemd-link", File: "/etc/systemd/network/05-ixgbe.link"}},
		{"systemd too old for ring sizes: udev", "@link-default /lib/systemd/network/99-default.link\n@udev-version 237\n",
			facts.NICPersist{Mechanism: "udev"}},
		{"no /etc/systemd/network: udev", "@link-default /lib/systemd/network/99-default.link\n@udev-version 252\n",
			facts.NICPersist{Mechanism: "udev"}},
		{"zero MAC ignored", "@mac 00:00:00:00:00:00\n", facts.NICPersist{Mechanism: "udev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nics := NICs(nicHead + tc.lines + "@if eth1\n@ring\nCannot get device ring settings: Operation not supported\n")
			if len(nics) != 2 {
				t.Fatalf("%d NICs", len(nics))
			}
			if nics[0].Persist == nil || !reflect.DeepEqual(*nics[0].Persist, tc.want) {
				t.Errorf("got %+v\nwant %+v", nics[0].Persist, tc.want)
			}
			if nics[0].Ring == nil || nics[0].Ring.RX != 512 || nics[0].FeatErr != "" || nics[0].Features["gro"].On {
				t.Errorf("ring/features disturbed: %+v", nics[0])
			}
			if nics[1].Persist != nil || nics[1].RingErr == "" {
				t.Errorf("eth1: %+v", nics[1])
			}
		})
	}
}
