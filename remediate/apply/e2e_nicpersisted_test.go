//go:build e2e

package apply_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// nicFinding is one host's finding of a rule in a JSON scan.
func nicFinding(t *testing.T, c cli, inv, host, rule string) rules.Finding {
	t.Helper()
	code, js, _ := c.quiet().run("scan", inv, "-f", "json", "--fail-on", "critical")
	var r report.Report
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("scan (exit %d): %v", code, err)
	}
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if h.Name == host && f.Rule == rule {
				return f
			}
		}
	}
	t.Fatalf("no finding %s on %s", rule, host)
	return rules.Finding{}
}

// TestNICPersistedByHand: GRO turned on by hand (veth's default is off)
// passes nic-offload but nothing restores it at boot: the scan warns
// nic-persisted, fix --apply writes the persistence only (the running
// NIC is not touched) and verifies it in the re-gathered boot settings, a
// re-scan passes, and the rollback removes the udev rule again while GRO
// stays as the operator left it.
func TestNICPersistedByHand(t *testing.T) {
	bin := buildKaudit(t)
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "p1", Kafka: &testfleet.BrokerSpec{Version: "3.6.1"}}})
	h := f.Host("p1")
	const udevRules = "/etc/udev/rules.d/99-kaudit-ethtool.rules"
	h.Exec(t, "ethtool", "-K", "eth0", "gro", "off")
	inv := inventoryWithIfaces(t, f)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	rulesBefore := sha(t, h, udevRules)

	fd := nicFinding(t, c, inv, "p1", "nic-persisted")
	t.Logf("GRO off: nic-persisted %s %q", fd.Status, fd.Reason)
	if fd.Status == rules.Warn && strings.Contains(fd.Reason, "eth0 gro") {
		t.Errorf("gro off is nic-offload's, not nic-persisted's: %q", fd.Reason)
	}

	h.Exec(t, "ethtool", "-K", "eth0", "gro", "on") // by hand
	fd = nicFinding(t, c, inv, "p1", "nic-persisted")
	t.Logf("GRO on by hand: nic-persisted %s %q", fd.Status, fd.Reason)
	const want = "nothing on the host sets eth0 gro at boot: if it was set at runtime (by hand, or by an interrupted run) it reverts at the next reboot to the driver's default"
	if fd.Status != rules.Warn || !strings.Contains(fd.Reason, want) || fd.Fix == nil || fd.Fix.NICPersist["eth0"]["gro"] != "on" {
		t.Fatalf("nic-persisted %s %q fix %+v", fd.Status, fd.Reason, fd.Fix)
	}
	if s := nicFinding(t, c, inv, "p1", "nic-offload").Status; s != rules.Pass {
		t.Errorf("nic-offload %s with gro on", s)
	}

	code, plan, _ := c.run("fix", inv, "--rules", "nic-persisted")
	t.Logf("plan (exit %d):\n%s", code, plan)
	if code != 0 || !strings.Contains(plan, "eth0 gro") || !strings.Contains(plan, "persist only") {
		t.Fatalf("plan (exit %d) has no persist-only eth0 gro", code)
	}
	code, out, _ := c.run("fix", inv, "--rules", "nic-persisted", "--apply", "--yes", "--journal-dir", jdir)
	m := runRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("fix --apply: exit %d\n%s", code, out)
	}
	id := m[1]
	if !strings.Contains(out, "nic-offload eth0 gro: on → on (persist only)") {
		t.Errorf("run output does not say persist only")
	}
	hj := loadJournal(t, jdir, id).Host("p1")
	if hj.Status != remediate.StatusVerified || len(hj.Backups) != 1 || hj.Backups[0].Path != udevRules || hj.Backups[0].Existed || len(hj.Runtime) != 0 {
		t.Fatalf("journal: %+v", hj)
	}
	rulesText := h.Exec(t, "cat", udevRules)
	t.Logf("AFTER p1 %s:\n%s", udevRules, rulesText)
	if !strings.Contains(rulesText, `KERNEL=="eth0", RUN+="/usr/sbin/ethtool -K eth0 gro on"`) {
		t.Errorf("rules %q", rulesText)
	}
	if g := feature(t, h, "generic-receive-offload"); g != "on" {
		t.Errorf("gro %s after apply", g)
	}
	fd = nicFinding(t, c, inv, "p1", "nic-persisted")
	t.Logf("re-scan: nic-persisted %s %q (%s)", fd.Status, fd.Reason, fd.Observed)
	if fd.Status != rules.Pass || !strings.Contains(fd.Observed, "eth0 gro on ("+udevRules+":3)") {
		t.Errorf("re-scan nic-persisted %s %q", fd.Status, fd.Observed)
	}
	if code, out, _ := c.run("fix", inv, "--rules", "nic-persisted", "--apply", "--yes", "--journal-dir", jdir); code != 0 || runRE.MatchString(out) {
		t.Errorf("second apply: exit %d\n%s", code, out)
	}

	if code, _, _ := c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir); code != 0 {
		t.Fatalf("rollback: exit %d", code)
	}
	rulesBack, groBack := sha(t, h, udevRules), feature(t, h, "generic-receive-offload")
	t.Logf("ROLLED BACK p1: %s %s, gro %s", udevRules, rulesBack, groBack)
	if rulesBack != rulesBefore || rulesBack != "absent" || groBack != "on" {
		t.Errorf("after rollback: rules %s gro %s, want %s on", rulesBack, groBack, rulesBefore)
	}
	if s := nicFinding(t, c, inv, "p1", "nic-persisted").Status; s != rules.Warn {
		t.Errorf("after rollback nic-persisted %s, want warn again", s)
	}
}

// TestNICPersistedDifferentAtBoot: the host's ifupdown stanza turns GRO
// off at ifup, and GRO was turned on by hand: nic-persisted fails (the
// reboot changes it), the fix edits that post-up line in place (persist
// only) and verifies the boot value, the rollback restores the file byte
// for byte.
func TestNICPersistedDifferentAtBoot(t *testing.T) {
	bin := buildKaudit(t)
	const interfaces = "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet manual\n\tmtu 1500\n\tpost-up /usr/sbin/ethtool -K eth0 gro off || true\n"
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "q1", Kafka: &testfleet.BrokerSpec{Version: "3.6.1"},
		Files: map[string]string{
			"/etc/network/interfaces": interfaces,
			"/usr/sbin/ifup":          "#!/bin/sh\necho 'test host: ifup is not run' >&2\nexit 1\n",
		}}})
	h := f.Host("q1")
	h.Exec(t, "ethtool", "-K", "eth0", "gro", "on")
	inv := inventoryWithIfaces(t, f)
	jdir := t.TempDir()
	c := cli{t: t, bin: bin, home: t.TempDir()}
	ifBefore := sha(t, h, "/etc/network/interfaces")

	fd := nicFinding(t, c, inv, "q1", "nic-persisted")
	t.Logf("nic-persisted %s %q", fd.Status, fd.Reason)
	if fd.Status != rules.Fail || !strings.Contains(fd.Reason, "eth0 gro: running on, but /etc/network/interfaces:7 sets off at boot") {
		t.Fatalf("nic-persisted %s %q", fd.Status, fd.Reason)
	}
	code, out, _ := c.run("fix", inv, "--rules", "nic-persisted", "--apply", "--yes", "--journal-dir", jdir)
	m := runRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("fix --apply: exit %d", code)
	}
	id := m[1]
	hj := loadJournal(t, jdir, id).Host("q1")
	if hj.Status != remediate.StatusVerified || len(hj.Runtime) != 0 {
		t.Fatalf("journal: %+v", hj)
	}
	got := h.Exec(t, "cat", "/etc/network/interfaces")
	t.Logf("AFTER q1 /etc/network/interfaces:\n%s", got)
	if !strings.Contains(got, "\tpost-up /usr/sbin/ethtool -K eth0 gro on || true\n") || strings.Contains(got, "gro off") {
		t.Errorf("interfaces %q", got)
	}
	if fd := nicFinding(t, c, inv, "q1", "nic-persisted"); fd.Status == rules.Fail || strings.Contains(fd.Reason, "eth0 gro") {
		t.Errorf("re-scan nic-persisted %s %q", fd.Status, fd.Reason)
	}
	if code, _, _ := c.run("rollback", inv, "--run", id, "--yes", "--journal-dir", jdir); code != 0 {
		t.Fatalf("rollback: exit %d", code)
	}
	if s, g := sha(t, h, "/etc/network/interfaces"), feature(t, h, "generic-receive-offload"); s != ifBefore || g != "on" {
		t.Errorf("after rollback: interfaces %s gro %s, want %s on", s, g, ifBefore)
	}
}
