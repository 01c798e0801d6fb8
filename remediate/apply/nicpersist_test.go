package apply

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/nicpersist"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

var setRX = NICSetting{Kind: remediate.KindNICRing, Iface: "eth0", Setting: "rx", Value: "4096"}

func TestRenderNICPersistRefuses(t *testing.T) {
	st := &readState{files: map[string]fileState{}, ethtool: "/usr/sbin/ethtool"}
	for _, tc := range []struct {
		path string
		set  []NICSetting
	}{
		{"/etc/passwd", []NICSetting{setRX}},
		{"/etc/network/interfaces", []NICSetting{setRX}},                   // absent: not created
		{"/etc/sysconfig/network-scripts/ifcfg-eth0", []NICSetting{setRX}}, // read only: kaudit does not edit it
		{"/etc/systemd/network/10-kaudit-eth1.link", []NICSetting{setRX}},
		{"/etc/network/interfaces.d/sub/x", []NICSetting{setRX}},
	} {
		set := append([]NICSetting(nil), tc.set...)
		for i := range set {
			set[i].Path, set[i].Match = tc.path, "MACAddress=52:54:00:aa:bb:cc Driver=virtio_net"
		}
		if _, _, err := renderNICPersist(set, st, tRun); err == nil {
			t.Errorf("%s accepted", tc.path)
		}
	}
}

// nicPersistPlan is a plan of NIC changes persisted in path.
func nicPersistPlan(host, path string, match remediate.PersistMatch, nm remediate.NMConnection) remediate.HostPlan {
	return remediate.HostPlan{Host: host, Changes: []remediate.Change{
		{Host: host, Rules: []string{"nic-ring"}, Kind: remediate.KindNICRing, Target: "eth0 rx", From: "512", To: "4096", Runtime: true, Persist: true, PersistPath: path, PersistMatch: match, NM: nm},
		{Host: host, Rules: []string{"nic-offload"}, Kind: remediate.KindNICOffload, Target: "eth0 gro", From: "off", To: "on", Runtime: true, Persist: true, PersistPath: path, PersistMatch: match, NM: nm},
	}}
}

// TestNICPersistSandbox applies NIC changes persisted in each file
// mechanism and rolls them back: the file is edited (or created), the
// udev rule is not written, and the rollback restores every byte.
func TestNICPersistSandbox(t *testing.T) {
	for i, tc := range []struct {
		name, path, before string
		match              remediate.PersistMatch
		want               []string // in the file after apply
	}{
		{name: "ifupdown", path: "/etc/network/interfaces",
			before: "# managed by hand\nauto eth0\niface eth0 inet static\n  address 192.0.2.10/24\n\nauto eth1\niface eth1 inet dhcp\n",
			want:   []string{"  address 192.0.2.10/24\n# post-up lines added by kaudit fix", "-G eth0 rx 4096 || true\n  post-up ", "-K eth0 gro on || true\n\nauto eth1\niface eth1 inet dhcp\n"}},
		{name: "systemd-link", path: remediate.LinkPath("eth0"), match: "MACAddress=52:54:00:aa:bb:cc Driver=ixgbe",
			want: []string{"[Match]\nMACAddress=52:54:00:aa:bb:cc\nDriver=ixgbe\n", "GenericReceiveOffload=true\nRxBufferSize=4096\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t, "h1")
			if tc.before != "" {
				s.write(t, "h1", tc.path, tc.before)
			} else if err := os.MkdirAll(s.path("h1", "/etc/systemd/network"), 0o755); err != nil {
				t.Fatal(err)
			}
			h := Host{Inv: inventory.Host{Name: "h1", Address: "192.0.2.1", User: "root", KafkaPort: 9092},
				Findings: []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: rules.Pass}}, Plan: nicPersistPlan("h1", tc.path, tc.match, "")}
			runID := fmt.Sprintf("20260101T000000Z-%08d", 100+i)
			j, err := Apply(context.Background(), []Host{h}, Options{Runner: s, RunID: runID})
			if err != nil {
				t.Fatal(err)
			}
			hj := j.Host("h1")
			if hj.Status != remediate.StatusVerified || len(hj.Backups) != 1 || hj.Backups[0].Path != tc.path || hj.Backups[0].Existed != (tc.before != "") || len(hj.Runtime) != 2 {
				t.Fatalf("%+v", hj)
			}
			got := s.read("h1", tc.path)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", tc.path, w, got)
				}
			}
			if s.read("h1", remediate.NICPersistPath) != "<absent>" {
				t.Error("udev rule written too")
			}
			if s.read("h1", "/nic/eth0/rx")+s.read("h1", "/nic/eth0/gro") != "4096\non\n" {
				t.Error("runtime values not set")
			}

			// Again: nothing to do.
			j2, err := Apply(context.Background(), []Host{h}, Options{Runner: s, RunID: fmt.Sprintf("20260101T000000Z-%08d", 200+i)})
			if err != nil || j2.Host("h1").Status != remediate.StatusUnchanged {
				t.Errorf("second apply: %+v %v", j2.Host("h1"), err)
			}

			res, err := Rollback(context.Background(), []inventory.Host{h.Inv}, j, Options{Runner: s})
			if err != nil || len(res) != 1 || res[0].Err != nil {
				t.Fatalf("rollback: %+v %v", res, err)
			}
			if after := s.read("h1", tc.path); (tc.before == "" && after != "<absent>") || (tc.before != "" && after != tc.before) {
				t.Errorf("after rollback %q, want %q", after, tc.before)
			}
			if s.read("h1", "/nic/eth0/rx")+s.read("h1", "/nic/eth0/gro") != "512\noff\n" {
				t.Error("runtime values not restored")
			}
		})
	}
}

const tUUID = "16b7676e-40b8-3b51-b414-7d7c32c7969a"

// fakeNmcli keeps connection properties in files under
// $SANDBOX_NIC/nm/<uuid>/<property>; an absent file is an unset property
// (nmcli -g prints an empty line for it). Only the two forms kaudit uses.
const fakeNmcli = `#!/bin/sh
case "$1 $2 $3 $4" in
"-g "*" connection show") d="$SANDBOX_NIC/nm/$5"; [ -d "$d" ] || { echo "Error: $5 - no such connection profile." >&2; exit 10; }
	cat "$d/$2" 2>/dev/null || echo ;;
"connection modify "*) d="$SANDBOX_NIC/nm/$3"; [ -d "$d" ] || exit 10
	if [ -z "$5" ]; then rm -f "$d/$4"; else printf '%s\n' "$5" > "$d/$4"; fi ;;
*) exit 2 ;;
esac
`

func TestNMScripts(t *testing.T) {
	key := remediate.NMConnection(tUUID).Key("rx")
	if _, _, err := nicTarget(remediate.KindNICRing, key); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"nm:" + tUUID + "; reboot rx", "nm:X rx", "nm:" + strings.ToUpper(tUUID) + " rx", "nm: rx"} {
		if _, _, err := nicTarget(remediate.KindNICRing, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := checkRuntime(remediate.KindNICRing, key, "unset", "4096"); err != nil {
		t.Error(err)
	}
	if err := checkRuntime(remediate.KindNICRing, "eth0 rx", "unset", "4096"); err == nil {
		t.Error("unset accepted for a running ethtool value")
	}
	if _, err := nicpersist.RenderUdev(nil, []nicpersist.Setting{{Iface: "nm:" + tUUID, Setting: "rx", Value: "4096"}}, "/usr/sbin/ethtool", tRun); err == nil {
		t.Error("a connection written as a udev rule")
	}
	script, err := RollbackScript(RollbackParams{Marker: tMarker, RunID: tRun, Runtime: []remediate.RuntimeValue{{Kind: remediate.KindNICOffload, Key: remediate.NMConnection(tUUID).Key("gro"), Before: "unset", After: "on"}}})
	if err != nil {
		t.Fatal(err)
	}
	shSyntax(t, script)
	if !strings.Contains(string(script), "VALUES='restore-nic-0\tnm:"+tUUID+" gro\tnm\t"+tUUID+"\tgro\tethtool.feature-gro\tunset\ton\n") {
		t.Errorf("rollback script does not unset the property:\n%s", script)
	}
}

// TestNICPersistNetworkManagerSandbox: settings persisted in a
// NetworkManager connection through nmcli; the previous values (one set,
// one unset) are journalled and put back by the rollback, also from a
// journal rebuilt from the host's manifest.
func TestNICPersistNetworkManagerSandbox(t *testing.T) {
	s := newSandbox(t, "h1")
	s.write(t, "h1", "/bin/nmcli", fakeNmcli)
	if err := os.Chmod(s.path("h1", "/bin/nmcli"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.write(t, "h1", "/nic/nm/"+tUUID+"/ethtool.ring-rx", "1024\n")
	nmState := func() string {
		return s.read("h1", "/nic/nm/"+tUUID+"/ethtool.ring-rx") + " " + s.read("h1", "/nic/nm/"+tUUID+"/ethtool.feature-gro")
	}
	h := Host{Inv: inventory.Host{Name: "h1", Address: "192.0.2.1", User: "root", KafkaPort: 9092},
		Findings: []rules.Finding{{Rule: rules.RuleKernelSynackWscale, Status: rules.Pass}},
		Plan:     nicPersistPlan("h1", `NetworkManager connection "Wired connection 1"`, "", tUUID)}
	const runID = "20260101T000000Z-00000300"
	j, err := Apply(context.Background(), []Host{h}, Options{Runner: s, RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Host("h1")
	if hj.Status != remediate.StatusVerified || len(hj.Backups) != 0 || len(hj.Runtime) != 4 {
		t.Fatalf("%+v", hj)
	}
	want := map[string]string{remediate.NMConnection(tUUID).Key("rx"): "1024", remediate.NMConnection(tUUID).Key("gro"): "unset"}
	for _, r := range hj.Runtime {
		if b, ok := want[r.Key]; ok && r.Before != b {
			t.Errorf("%s journalled before %q, want %q", r.Key, r.Before, b)
		}
		delete(want, r.Key)
	}
	if len(want) != 0 {
		t.Errorf("not journalled: %v", want)
	}
	if got := nmState(); got != "4096\n on\n" {
		t.Errorf("connection after apply: %q", got)
	}
	if s.read("h1", remediate.NICPersistPath) != "<absent>" {
		t.Error("udev rule written too")
	}
	if j2, err := Apply(context.Background(), []Host{h}, Options{Runner: s, RunID: "20260101T000000Z-00000301"}); err != nil || j2.Host("h1").Status != remediate.StatusUnchanged {
		t.Errorf("second apply: %+v %v", j2.Host("h1"), err)
	}

	rebuilt, errs, err := JournalFromHosts(context.Background(), []inventory.Host{h.Inv}, runID, Options{Runner: s})
	if err != nil || len(errs) != 0 || len(rebuilt.Hosts) != 1 || len(rebuilt.Hosts[0].Runtime) != 4 {
		t.Fatalf("journal from the host: %+v %v %v", rebuilt, errs, err)
	}
	res, err := Rollback(context.Background(), []inventory.Host{h.Inv}, rebuilt, Options{Runner: s})
	if err != nil || len(res) != 1 || res[0].Err != nil || res[0].Detail != "4 restored" {
		t.Fatalf("rollback: %+v %v", res, err)
	}
	if got := nmState(); got != "1024\n <absent>" {
		t.Errorf("connection after rollback: %q", got)
	}
	if s.read("h1", "/nic/eth0/rx")+s.read("h1", "/nic/eth0/gro") != "512\noff\n" {
		t.Error("running values not restored")
	}
}
