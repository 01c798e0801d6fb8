package nicpersist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tRun = "20260102T030405Z-1a2b3c4d"

// golden compares got with testdata/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
	}
}

var (
	setRX  = Setting{Iface: "eth0", Setting: "rx", Value: "4096"}
	setGRO = Setting{Iface: "eth0", Setting: "gro", Value: "on"}
)

func TestEditInterfaces(t *testing.T) {
	const eth = "/usr/sbin/ethtool"
	added := "# post-up lines added by kaudit fix, run " + tRun + "\n"
	for _, tc := range []struct {
		name, in, want string
		err            string
	}{
		{name: "stanza with options, more stanzas after",
			in: "# interfaces(5)\nsource /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet static\n\taddress 192.0.2.10/24\n\tgateway 192.0.2.1\n\n# v6\niface eth0 inet6 auto\n",
			want: "# interfaces(5)\nsource /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet static\n\taddress 192.0.2.10/24\n\tgateway 192.0.2.1\n" + added +
				"\tpost-up /usr/sbin/ethtool -K eth0 gro on || true\n\tpost-up /usr/sbin/ethtool -G eth0 rx 4096 || true\n\n# v6\niface eth0 inet6 auto\n"},
		{name: "stanza without options at the end, no final newline",
			in:   "auto eth0\niface eth0 inet dhcp",
			want: "auto eth0\niface eth0 inet dhcp\n" + added + "    post-up /usr/sbin/ethtool -K eth0 gro on || true\n    post-up /usr/sbin/ethtool -G eth0 rx 4096 || true\n"},
		{name: "earlier run's lines updated in place, CRLF kept",
			in:   "iface eth0 inet dhcp\r\n  post-up /sbin/ethtool -G eth0 rx 2048 || true\r\n  post-up /sbin/ethtool -K eth0 gro on || true\r\nauto eth1\r\n",
			want: "iface eth0 inet dhcp\r\n  post-up /usr/sbin/ethtool -G eth0 rx 4096 || true\r\n  post-up /sbin/ethtool -K eth0 gro on || true\r\nauto eth1\r\n"},
		{name: "already there: unchanged",
			in:   "iface eth0 inet dhcp\n  post-up /sbin/ethtool -G eth0 rx 4096 || true\n  post-up /sbin/ethtool -K eth0 gro on\n",
			want: "iface eth0 inet dhcp\n  post-up /sbin/ethtool -G eth0 rx 4096 || true\n  post-up /sbin/ethtool -K eth0 gro on\n"},
		{name: "eth0.100 and eth00 are other interfaces",
			in:  "iface eth0.100 inet manual\n  vlan-raw-device eth0\niface eth00 inet manual\n",
			err: `no "iface eth0" stanza`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := EditInterfaces([]byte(tc.in), []Setting{setGRO, setRX}, eth, tRun)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", out, tc.want)
			}
			again, err := EditInterfaces(out, []Setting{setGRO, setRX}, eth, tRun)
			if err != nil || string(again) != string(out) && !strings.Contains(tc.name, "in place") {
				t.Errorf("second edit changed it: %q %v", again, err)
			}
		})
	}
	if _, err := EditInterfaces([]byte("iface eth0 inet dhcp\n"), []Setting{setRX}, "/bin/ethtool; reboot", tRun); err == nil {
		t.Error("bad ethtool path accepted")
	}
	if _, err := EditInterfaces([]byte("iface eth0 inet dhcp\n"), []Setting{{Iface: "eth0", Setting: "rx", Value: "1; reboot"}}, eth, tRun); err == nil {
		t.Error("bad value accepted")
	}
}

func TestRenderLink(t *testing.T) {
	const match = "MACAddress=52:54:00:aa:bb:cc Driver=virtio_net"
	out, err := RenderLink(nil, []Setting{setGRO, setRX}, match, tRun)
	if err != nil {
		t.Fatal(err)
	}
	want := LinkHeader + "# Last run: " + tRun + "\n\n[Match]\nMACAddress=52:54:00:aa:bb:cc\nDriver=virtio_net\n\n[Link]\n" +
		"NamePolicy=keep kernel database onboard slot path\nAlternativeNamesPolicy=database onboard slot path\nMACAddressPolicy=persistent\n" +
		"GenericReceiveOffload=true\nRxBufferSize=4096\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if same, err := RenderLink(out, []Setting{setRX}, match, "20260101T000000Z-00000009"); err != nil || string(same) != string(out) {
		t.Errorf("already holding: rewritten %v", err)
	}
	more, err := RenderLink(out, []Setting{{Iface: "eth0", Setting: "tx", Value: "1024"}, {Iface: "eth0", Setting: "gro", Value: "off"}}, match, tRun)
	if err != nil || !strings.Contains(string(more), "GenericReceiveOffload=false\nRxBufferSize=4096\nTxBufferSize=1024\n") {
		t.Errorf("merge: %v\n%s", err, more)
	}
	for _, bad := range []string{"", "MACAddress=52:54:00:aa:bb:cc", "MACAddress=52:54:00:aa:bb:cc Driver=x\nName=evil", "OriginalName=* Driver=x"} {
		if _, err := RenderLink(nil, []Setting{setRX}, bad, tRun); err == nil {
			t.Errorf("match %q accepted", bad)
		}
	}
	if _, err := RenderLink([]byte("[Link]\nthis is not ours\n"), []Setting{setRX}, match, tRun); err == nil {
		t.Error("foreign content accepted")
	}
}

func TestRenderUdev(t *testing.T) {
	set := []Setting{{Iface: "eth0", Setting: "gro", Value: "on"}, {Iface: "eth0", Setting: "rx", Value: "4096"}}
	out, err := RenderUdev(nil, set, "/usr/sbin/ethtool", tRun)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "99-kaudit-ethtool.rules", out)
	// Re-rendering keeps earlier settings, the new value wins.
	again, err := RenderUdev(out, []Setting{{Iface: "eth1", Setting: "tx", Value: "1024"}, {Iface: "eth0", Setting: "gro", Value: "off"}}, "/usr/sbin/ethtool", tRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`KERNEL=="eth0", RUN+="/usr/sbin/ethtool -K eth0 gro off"`, `KERNEL=="eth0", RUN+="/usr/sbin/ethtool -G eth0 rx 4096"`, `KERNEL=="eth1", RUN+="/usr/sbin/ethtool -G eth1 tx 1024"`} {
		if !strings.Contains(string(again), want+"\n") {
			t.Errorf("missing %s in\n%s", want, again)
		}
	}
	if !udevHolds(out, set) || udevHolds(out, []Setting{{Iface: "eth0", Setting: "gro", Value: "off"}}) {
		t.Error("nicRulesHold")
	}
	// A line kaudit did not write is refused, not rewritten.
	if _, err := RenderUdev([]byte(`ACTION=="add", RUN+="/bin/sh -c reboot"`+"\n"), set, "/usr/sbin/ethtool", tRun); err == nil {
		t.Error("foreign rule accepted")
	}
	for _, bad := range []string{"ethtool", "/usr/sbin/eth tool", "/usr/sbin/ethtool\";reboot;\"", "/usr/../bin/sh"} {
		if _, err := RenderUdev(nil, set, bad, tRun); err == nil {
			t.Errorf("ethtool path %q accepted", bad)
		}
	}
	for _, s := range []Setting{
		{Iface: "eth0", Setting: "gro", Value: "on\"; reboot"},
		{Iface: "eth0\"", Setting: "gro", Value: "on"},
		{Iface: "eth0", Setting: "rx-all", Value: "on"},
		{Iface: "eth0", Setting: "rx", Value: "0"},
		{Iface: "-eth0", Setting: "rx", Value: "10"},
	} {
		if _, err := RenderUdev(nil, []Setting{s}, "/usr/sbin/ethtool", tRun); err == nil {
			t.Errorf("setting %+v accepted", s)
		}
	}
}
