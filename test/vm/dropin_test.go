//go:build vm

package vm

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/rules"
)

// The open-files fix on a real systemd guest: the lab broker's unit sets
// LimitNOFILE=4096; the scan finds kafka.service and what systemd gives
// it; the drop-in is planned, applied and verified (systemctl show after
// the daemon-reload), survives a power cut (durable), and after the test
// (not kaudit) restarts the broker, the process has the new limit; the
// rollback removes the drop-in and its directory and reloads systemd.
//
// The broker-open-files rule is written elsewhere: its failing finding is
// stood in for here (a Fix with NoFile 100000) and the plan made and
// applied in-process, as `kaudit fix --apply` does (pipeline/fix.go).
func TestBrokerUnitDropIn(t *testing.T) {
	g := Boot(t, Options{Name: "dropin", Flavour: Stock})
	installBroker(t, g)
	slow(t, g, `sed -i 's/^\[Service\]$/[Service]\nLimitNOFILE=4096/' /etc/systemd/system/kafka.service && systemctl daemon-reload && systemctl restart kafka.service && sleep 2`)
	t.Logf("guest: cgroup, systemctl show:\n%s", slow(t, g, `cat /proc/$(systemctl show -p MainPID --value kafka.service)/cgroup; systemctl show -p LimitNOFILE -p LimitNOFILESoft -p FragmentPath -p DropInPaths kafka.service; grep 'open files' /proc/$(systemctl show -p MainPID --value kafka.service)/limits`))
	path := WriteInventory(t, g)

	fx := scanFactsOf(t, path, g.Name)
	u := fx.Kafka.Unit
	if u == nil || u.Name != "kafka.service" || u.NoFile == nil || *u.NoFile != (facts.Limit{Soft: 4096, Hard: 4096}) || u.FragmentPath != "/etc/systemd/system/kafka.service" {
		t.Fatalf("broker unit %+v (section %+v), want kafka.service with LimitNOFILE 4096", u, fx.Sections[facts.SecBrokerUnit])
	}
	stand := []rules.Finding{{Rule: "broker-open-files", Status: rules.Fail, Fix: &rules.Fix{Summary: "raise the open-files limit", NoFile: 100000}}}
	plan := remediate.PlanHost(g.Name, fx, stand, remediate.Selector{})
	if len(plan.Changes) != 1 || plan.Changes[0].Kind != remediate.KindUnitDropIn || plan.Changes[0].To != "100000" || !plan.RestartRequired() {
		t.Fatalf("plan %+v: want the drop-in LimitNOFILE=100000", plan)
	}

	inv, err := inventory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	opt := apply.Options{JournalPath: t.TempDir() + "/journal.json", Timeout: 5 * time.Minute, Log: func(s string) { t.Log(s) }}
	ctx := context.Background()
	j, err := apply.Apply(ctx, []apply.Host{{Inv: inv.Hosts[0], Facts: fx, Findings: stand, Plan: plan}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if hj := j.Hosts[0]; hj.Status != remediate.StatusVerified {
		t.Fatalf("apply: %s: %s", hj.Status, hj.Error)
	}
	dropIn := remediate.DropInPath("kafka.service")
	if err := g.PowerCut(); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	if got := slow(t, g, "cat "+dropIn); got != remediate.DropInText("100000") {
		t.Fatalf("after the power cut %s holds %q", dropIn, got)
	}
	// The test, not kaudit, restarts the broker (the boot already did).
	slow(t, g, "systemctl restart kafka.service && sleep 2")
	after := scanFactsOf(t, path, g.Name)
	if p := after.Kafka.Process; p != nil && p.NoFile != nil && p.NoFile.Soft != 100000 {
		t.Errorf("restarted broker: soft open files %d, want 100000", p.NoFile.Soft)
	}
	if lim := slow(t, g, `grep 'open files' /proc/$(systemctl show -p MainPID --value kafka.service)/limits`); !strings.Contains(lim, "100000") {
		t.Errorf("restarted broker: %q, want 100000", lim)
	}

	res, err := apply.Rollback(ctx, inv.Hosts, j, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rollback: %+v", res)
	if got := slow(t, g, "ls -d "+dropIn+" /etc/systemd/system/kafka.service.d 2>/dev/null; systemctl show -p LimitNOFILE kafka.service"); got != "LimitNOFILE=4096\n" {
		t.Errorf("after rollback: %q, want no drop-in, no directory, LimitNOFILE=4096", got)
	}
}

// scanFactsOf scans the inventory and returns host's facts (generous
// deadlines: exit 3, the guest not audited in the default 10 s SSH
// handshake, was seen under a load average of 20).
func scanFactsOf(t *testing.T, inv, host string) *facts.Facts {
	t.Helper()
	rep, r := scanJSON(t, "scan", inv, "--timeout", "5m", "--connect-timeout", "1m") // a TCG guest on a loaded machine is slow to answer SSH
	for i := range rep.Hosts {
		if h := rep.Hosts[i]; h.Name == host && h.Facts != nil && h.Facts.Kafka != nil {
			return h.Facts
		}
	}
	t.Fatalf("scan exited %d without %s's broker facts\nstderr:\n%s", r.code, host, r.stderr)
	return nil
}
