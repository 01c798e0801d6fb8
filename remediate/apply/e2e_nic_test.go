//go:build e2e

package apply_test

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestNICPersistIfupdown: a host whose eth0 is configured by ifupdown
// (an "iface eth0" stanza in its /etc/network/interfaces, ifup present)
// gets kaudit's post-up line in that stanza, not a udev rule; the
// rollback restores the file byte for byte.
func TestNICPersistIfupdown(t *testing.T) {
	bin := buildKaudit(t)
	const interfaces = "# The loopback network interface\nauto lo\niface lo inet loopback\n\n" +
		"# The primary network interface\nauto eth0\niface eth0 inet manual\n\tmtu 1500\n\n" +
		"iface eth1 inet dhcp\n"
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "i1", Kafka: &testfleet.BrokerSpec{Version: "3.6.1"},
		Files: map[string]string{
			"/etc/network/interfaces": interfaces,
			"/usr/sbin/ifup":          "#!/bin/sh\necho 'test host: ifup is not run' >&2\nexit 1\n",
		}}})
	h := f.Host("i1")
	h.Exec(t, "ethtool", "-K", "eth0", "gro", "off")
	inv := inventoryWithIfaces(t, f)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	const udevRules = "/etc/udev/rules.d/99-kaudit-ethtool.rules"
	ifBefore, rulesBefore := sha(t, h, "/etc/network/interfaces"), sha(t, h, udevRules)
	groBefore := feature(t, h, "generic-receive-offload")

	code, plan, _ := c.run("fix", inv, "--rules", "nic-offload")
	if code != 0 || !strings.Contains(plan, "in /etc/network/interfaces") || !strings.Contains(plan, `post-up lines in the "iface eth0" stanza`) {
		t.Fatalf("plan (exit %d) does not persist in /etc/network/interfaces", code)
	}
	code, out, _ := c.run("fix", inv, "--rules", "nic-offload", "--apply", "--yes", "--journal-dir", jdir)
	if code != 0 {
		t.Fatalf("fix --apply: exit %d", code)
	}
	m := runRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatal("no run id")
	}
	id := m[1]
	hj := loadJournal(t, jdir, id).Host("i1")
	if hj.Status != remediate.StatusVerified || len(hj.Backups) != 1 || hj.Backups[0].Path != "/etc/network/interfaces" {
		t.Fatalf("journal: %+v", hj)
	}
	got := h.Exec(t, "cat", "/etc/network/interfaces")
	t.Logf("AFTER i1 /etc/network/interfaces:\n%s", got)
	want := "# The loopback network interface\nauto lo\niface lo inet loopback\n\n" +
		"# The primary network interface\nauto eth0\niface eth0 inet manual\n\tmtu 1500\n" +
		"# post-up lines added by kaudit fix, run " + id + "\n" +
		"\tpost-up /usr/sbin/ethtool -K eth0 gro on || true\n\n" +
		"iface eth1 inet dhcp\n"
	if got != want {
		t.Errorf("interfaces:\n%q\nwant\n%q", got, want)
	}
	if s := sha(t, h, udevRules); s != rulesBefore {
		t.Errorf("udev rule written too (%s)", s)
	}
	if g := feature(t, h, "generic-receive-offload"); g != "on" {
		t.Errorf("gro %s after apply", g)
	}
	if code, out, _ := c.run("fix", inv, "--rules", "nic-offload", "--apply", "--yes", "--journal-dir", jdir); code != 0 || runRE.MatchString(out) {
		t.Errorf("second apply: exit %d", code)
	}
	if code, _, _ := c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir); code != 0 {
		t.Fatalf("rollback: exit %d", code)
	}
	if s, g := sha(t, h, "/etc/network/interfaces"), feature(t, h, "generic-receive-offload"); s != ifBefore || g != groBefore {
		t.Errorf("after rollback: interfaces %s gro %s, want %s %s", s, g, ifBefore, groBefore)
	}
	if got := h.Exec(t, "cat", "/etc/network/interfaces"); got != interfaces {
		t.Errorf("after rollback:\n%q\nwant\n%q", got, interfaces)
	}
}
