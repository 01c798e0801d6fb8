package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/nicpersist"
)

// The files in testdata/nicboot are real configurations found in public
// repositories (see testdata/README.md) or written by kaudit; the helpers
// below turn them into the lines gather.sh's npersist prints for them
// (the same selection its awk makes).

func bootFile(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "nicboot", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// linkLines is "@link PATH" and its "@link-line N TEXT" lines.
func linkLines(t *testing.T, at, name string) []string {
	out := []string{"@link " + at}
	for i, l := range bootFile(t, name) {
		if s := strings.TrimLeft(l, " \t"); s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		out = append(out, fmt.Sprintf("@link-line %d %s", i+1, l))
	}
	return out
}

// udevLines are a rules file's lines that mention ethtool.
func udevLines(t *testing.T, at, name string) []string {
	var out []string
	for i, l := range bootFile(t, name) {
		if strings.Contains(l, "ethtool") {
			out = append(out, fmt.Sprintf("@udev-rule %s:%d %s", at, i+1, l))
		}
	}
	return out
}

// ifaceLines are the ethtool options of the "iface IF" stanzas of an
// interfaces file.
func ifaceLines(t *testing.T, at, name, iface string) []string {
	var out []string
	in := false
	stanza := map[string]bool{"iface": true, "mapping": true, "auto": true, "source": true, "source-directory": true, "allow-hotplug": true}
	for i, l := range bootFile(t, name) {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if stanza[f[0]] {
			in = f[0] == "iface" && len(f) > 1 && f[1] == iface
			continue
		}
		if in && (strings.HasPrefix(f[0], "hardware-dma-ring-") || strings.HasPrefix(f[0], "offload-") ||
			((f[0] == "pre-up" || f[0] == "up" || f[0] == "post-up") && strings.Contains(l, "ethtool"))) {
			out = append(out, fmt.Sprintf("@iface-opt %s:%d %s", at, i+1, l))
		}
	}
	return out
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func bv(value string, mech facts.PersistMechanism, src string, overridden ...string) facts.NICBootValue {
	return facts.NICBootValue{Value: value, Mechanism: mech, Source: src, Overridden: overridden}
}

func TestNICBoot(t *testing.T) {
	const (
		etcNet = "/etc/systemd/network/"
		libNet = "/usr/lib/systemd/network/"
		etcUd  = "/etc/udev/rules.d/"
		libUd  = "/usr/lib/udev/rules.d/"
		mac    = "52:54:00:aa:bb:cc"
	)
	udev245 := []string{"@udev-version 245"}
	ifcfgOpts := bootFile(t, "ifcfg-eth0")[7]
	for _, tc := range []struct {
		name, iface, driver string
		ps                  *facts.NICPersist
		lines               []string
		want                map[string]facts.NICBootValue
		unsure              []string
	}{
		{name: "nothing", iface: "eth0", lines: udev245},
		{name: "netplan .link by OriginalName", iface: "eth1",
			lines: cat(udev245, linkLines(t, "/run/systemd/network/10-netplan-eth1.link", "netplan-eth1.link")),
			want: map[string]facts.NICBootValue{
				"tso": bv("on", "systemd-link", "/run/systemd/network/10-netplan-eth1.link:8"),
				"gso": bv("on", "systemd-link", "/run/systemd/network/10-netplan-eth1.link:10"),
				"gro": bv("off", "systemd-link", "/run/systemd/network/10-netplan-eth1.link:11"),
				"lro": bv("on", "systemd-link", "/run/systemd/network/10-netplan-eth1.link:12"),
			}},
		{name: ".link of another interface", iface: "eth0",
			lines: cat(udev245, linkLines(t, "/run/systemd/network/10-netplan-eth1.link", "netplan-eth1.link"))},
		{name: "the first matching .link wins, by name across directories", iface: "eth0", driver: "ixgbe", ps: &facts.NICPersist{MAC: mac},
			lines: cat(udev245,
				linkLines(t, libNet+"05-any.link", "systemd-test99.link"), // other MAC: no match
				linkLines(t, libNet+"10-kaudit-eth0.link", "netplan-eth1.link"),
				linkLines(t, etcNet+"10-kaudit-eth0.link", "kaudit-10-eth0.link"), // masks the /usr/lib one
				linkLines(t, etcNet+"20-eth.link", "netplan-eth1.link")),
			want: map[string]facts.NICBootValue{
				"gro": bv("on", "systemd-link", etcNet+"10-kaudit-eth0.link:14"),
				"rx":  bv("4096", "systemd-link", etcNet+"10-kaudit-eth0.link:15"),
				"tx":  bv("4096", "systemd-link", etcNet+"10-kaudit-eth0.link:16"),
			}},
		{name: "a .link masked by /dev/null", iface: "eth0", driver: "ixgbe", ps: &facts.NICPersist{MAC: mac},
			lines: cat(udev245, linkLines(t, libNet+"10-kaudit-eth0.link", "kaudit-10-eth0.link"), []string{"@link-null " + etcNet + "10-kaudit-eth0.link"})},
		{name: "systemd 237: offloads, not rings", iface: "eth0", driver: "ixgbe", ps: &facts.NICPersist{MAC: mac},
			lines: cat([]string{"@udev-version 237"}, linkLines(t, etcNet+"10-kaudit-eth0.link", "kaudit-10-eth0.link")),
			want:  map[string]facts.NICBootValue{"gro": bv("on", "systemd-link", etcNet+"10-kaudit-eth0.link:14")},
			unsure: []string{etcNet + "10-kaudit-eth0.link:15: RxBufferSize= needs systemd 244, udevadm is 237: ignored",
				etcNet + "10-kaudit-eth0.link:16: TxBufferSize= needs systemd 244, udevadm is 237: ignored"}},
		{name: "no udevadm: .link not counted", iface: "eth1", lines: linkLines(t, etcNet+"10-netplan-eth1.link", "netplan-eth1.link"),
			unsure: []string{".link files exist but udevadm was not found: not counted"}},
		{name: ".link with a Path match: unsure, a later one applies", iface: "wlan0",
			lines:  cat(udev245, linkLines(t, etcNet+"10-pci.link", "path-match.link"), linkLines(t, etcNet+"20-netplan.link", "netplan-eth1.link")),
			unsure: []string{etcNet + "10-pci.link: [Match] Path= not evaluated by kaudit: if it matches wlan0, its settings apply instead of any later .link"}},
		{name: "udev %k with KERNEL glob", iface: "eth0",
			lines: udevLines(t, etcUd+"70-nanopi-m6-network.rules", "70-nanopi-m6-network.rules"),
			want: map[string]facts.NICBootValue{
				"tso": bv("on", "udev", etcUd+"70-nanopi-m6-network.rules:3"),
				"gso": bv("on", "udev", etcUd+"70-nanopi-m6-network.rules:3"),
				"gro": bv("on", "udev", etcUd+"70-nanopi-m6-network.rules:3"),
				"rx":  bv("512", "udev", etcUd+"70-nanopi-m6-network.rules:4"),
				"tx":  bv("512", "udev", etcUd+"70-nanopi-m6-network.rules:4"),
			}},
		{name: "udev KERNEL glob does not match", iface: "ens3", lines: udevLines(t, etcUd+"70-nanopi-m6-network.rules", "70-nanopi-m6-network.rules")},
		{name: "udev continuation line with a literal interface", iface: "nic0",
			lines: udevLines(t, etcUd+"99-r8169-fix.rules", "99-r8169-fix.rules"),
			want: map[string]facts.NICBootValue{
				"tso": bv("off", "udev", etcUd+"99-r8169-fix.rules:3"), "gso": bv("off", "udev", etcUd+"99-r8169-fix.rules:3"),
				"gro": bv("off", "udev", etcUd+"99-r8169-fix.rules:3"), "lro": bv("off", "udev", etcUd+"99-r8169-fix.rules:3"),
			}},
		{name: "udev DRIVERS match, then kaudit's rule wins by name", iface: "eth0", driver: "e1000e",
			lines: cat(udevLines(t, etcUd+"99-kaudit-ethtool.rules", "99-kaudit-ethtool.rules"), udevLines(t, libUd+"70-e1000e-fix.rules", "70-e1000e-fix.rules")),
			want: map[string]facts.NICBootValue{
				"tso": bv("off", "udev", libUd+"70-e1000e-fix.rules:1"),
				"gso": bv("off", "udev", libUd+"70-e1000e-fix.rules:1"),
				"gro": bv("on", "udev", etcUd+"99-kaudit-ethtool.rules:4", libUd+"70-e1000e-fix.rules:1=off"),
				"rx":  bv("4096", "udev", etcUd+"99-kaudit-ethtool.rules:3", libUd+"70-e1000e-fix.rules:2=4096"),
				"tx":  bv("4096", "udev", libUd+"70-e1000e-fix.rules:2"),
			}},
		{name: "udev DRIVERS of another driver", iface: "eth0", driver: "ixgbe", lines: udevLines(t, libUd+"70-e1000e-fix.rules", "70-e1000e-fix.rules")},
		{name: "udev NAME glob and $name, long feature name", iface: "eno12409v2",
			lines: udevLines(t, etcUd+"99-ethtool.rules", "99-ethtool-name.rules"),
			want:  map[string]facts.NICBootValue{"gro": bv("off", "udev", etcUd+"99-ethtool.rules:1")}},
		{name: "udev match kaudit does not evaluate", iface: "eth0",
			lines:  []string{`@udev-rule /etc/udev/rules.d/80-x.rules:2 ACTION=="add", SUBSYSTEM=="net", ENV{ID_BUS}=="pci", RUN+="/sbin/ethtool -K %k gro on"`},
			unsure: []string{"/etc/udev/rules.d/80-x.rules:2: udev match ENV{ID_BUS} not evaluated by kaudit: the rule may set gro on"}},
		{name: "udev rule for change events only", iface: "eth0",
			lines: []string{`@udev-rule /etc/udev/rules.d/80-x.rules:2 ACTION=="change", SUBSYSTEM=="net", KERNEL=="eth0", RUN+="/sbin/ethtool -K eth0 gro on"`}},
		{name: "ifupdown: hook options, then post-up wins", iface: "eth0", ps: &facts.NICPersist{Mechanism: facts.PersistIfupdown},
			lines: cat([]string{"@ifupdown-hook /etc/network/if-pre-up.d/ethtool"}, ifaceLines(t, "/etc/network/interfaces", "interfaces", "eth0")),
			want: map[string]facts.NICBootValue{
				"rx":  bv("4096", "ifupdown", "/etc/network/interfaces:9"),
				"tso": bv("on", "ifupdown", "/etc/network/interfaces:11"),
				"gro": bv("on", "ifupdown", "/etc/network/interfaces:13", "/etc/network/interfaces:10=off"),
			}},
		{name: "ifupdown without the ethtool hook", iface: "eth0", ps: &facts.NICPersist{Mechanism: facts.PersistIfupdown},
			lines: ifaceLines(t, "/etc/network/interfaces", "interfaces", "eth0"),
			want:  map[string]facts.NICBootValue{"gro": bv("on", "ifupdown", "/etc/network/interfaces:13")},
			unsure: []string{
				"/etc/network/interfaces:9: hardware-dma-ring-rx without the ethtool package's ifupdown hook (/etc/network/if-pre-up.d/ethtool): it sets nothing",
				"/etc/network/interfaces:10: offload-gro without the ethtool package's ifupdown hook (/etc/network/if-pre-up.d/ethtool): it sets nothing",
				"/etc/network/interfaces:11: offload-tso without the ethtool package's ifupdown hook (/etc/network/if-pre-up.d/ethtool): it sets nothing",
			}},
		{name: "ifupdown stanza not used when NetworkManager manages it", iface: "eth0", ps: &facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "eth0"},
			lines: cat([]string{"@ifupdown-hook /etc/network/if-pre-up.d/ethtool"}, ifaceLines(t, "/etc/network/interfaces", "interfaces", "eth0"))},
		{name: "ifcfg ETHTOOL_OPTS over udev", iface: "eth0",
			ps:    &facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 8, EthtoolOpts: strings.Trim(strings.TrimPrefix(ifcfgOpts, "ETHTOOL_OPTS="), `"`)},
			lines: udevLines(t, etcUd+"99-kaudit-ethtool.rules", "99-kaudit-ethtool.rules"),
			want: map[string]facts.NICBootValue{
				"rx":  bv("4096", "ifcfg", "/etc/sysconfig/network-scripts/ifcfg-eth0:8", etcUd+"99-kaudit-ethtool.rules:3=4096"),
				"tx":  bv("4096", "ifcfg", "/etc/sysconfig/network-scripts/ifcfg-eth0:8"),
				"gro": bv("on", "ifcfg", "/etc/sysconfig/network-scripts/ifcfg-eth0:8", etcUd+"99-kaudit-ethtool.rules:4=on"),
				"lro": bv("off", "ifcfg", "/etc/sysconfig/network-scripts/ifcfg-eth0:8"),
			}},
		{name: "ifcfg legacy ETHTOOL_OPTS sets nothing audited", iface: "eth0",
			ps: &facts.NICPersist{Mechanism: facts.PersistIfcfg, File: "/etc/sysconfig/network-scripts/ifcfg-eth0", Line: 3, EthtoolOpts: "autoneg off speed 1000 duplex full"}},
		{name: "NetworkManager properties", iface: "eth0", ps: &facts.NICPersist{Mechanism: facts.PersistNetworkManager, Connection: "Wired connection 1"},
			lines: cat(udevLines(t, etcUd+"99-kaudit-ethtool.rules", "99-kaudit-ethtool.rules"),
				[]string{"@nm-ethtool rx 2048", "@nm-ethtool tx ", "@nm-ethtool tso ignore", "@nm-ethtool gso !", "@nm-ethtool gro off", "@nm-ethtool lro on"}),
			want: map[string]facts.NICBootValue{
				"rx":  bv("2048", "networkmanager", `NetworkManager connection "Wired connection 1"`, etcUd+"99-kaudit-ethtool.rules:3=4096"),
				"gro": bv("off", "networkmanager", `NetworkManager connection "Wired connection 1"`, etcUd+"99-kaudit-ethtool.rules:4=on"),
				"lro": bv("on", "networkmanager", `NetworkManager connection "Wired connection 1"`),
			},
			unsure: []string{`NetworkManager connection "Wired connection 1": ethtool property for gso not read (nmcli failed)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nicpersist.Boot(tc.iface, tc.driver, tc.ps, tc.lines)
			if !reflect.DeepEqual(got.Settings, tc.want) {
				t.Errorf("settings:\n got %+v\nwant %+v", got.Settings, tc.want)
			}
			if !reflect.DeepEqual(got.Unsure, tc.unsure) {
				t.Errorf("unsure:\n got %q\nwant %q", got.Unsure, tc.unsure)
			}
		})
	}
}

// TestNICsBoot: the nics section carries the boot-time lines to nicpersist.Boot.
func TestNICsBoot(t *testing.T) {
	body := nicHead + "@mac 52:54:00:aa:bb:cc\n@udev-version 252\n" +
		`@udev-rule /etc/udev/rules.d/99-kaudit-ethtool.rules:4 ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth0", RUN+="/usr/sbin/ethtool -K eth0 gro on"` + "\n"
	nics := NICs(body)
	if len(nics) != 1 || nics[0].Boot == nil {
		t.Fatalf("%+v", nics)
	}
	want := map[string]facts.NICBootValue{"gro": bv("on", "udev", "/etc/udev/rules.d/99-kaudit-ethtool.rules:4")}
	if !reflect.DeepEqual(nics[0].Boot.Settings, want) || nics[0].Features["gro"].On {
		t.Errorf("boot %+v, features %+v", nics[0].Boot, nics[0].Features)
	}
}
