//go:build vm

package vm

import (
	"context"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/rules"
)

// TestRestartPutsFixInForce: fix --apply --restart's machinery on a real
// systemd guest, in-process as pipeline's fix runs it: the open-files
// drop-in (a change that needs a restart) is applied and verified, then
// the broker is restarted through kafka.service in its rollout step: a
// new MainPID, its listener's Send-Q equal to the backlog the broker asks
// for capped at somaxconn, the new process with the drop-in's limit, and
// the TcpExt counters read before the restart and after the watch. The
// gate stands in for the cluster's health (the guest forwards only SSH);
// it is called after the wave, before the watch.
func TestRestartPutsFixInForce(t *testing.T) {
	g := Boot(t, Options{Name: "restart", Flavour: Stock})
	installBroker(t, g)
	slow(t, g, `sed -i 's/^\[Service\]$/[Service]\nLimitNOFILE=4096/' /etc/systemd/system/kafka.service && systemctl daemon-reload && systemctl restart kafka.service && sleep 2`)
	path := WriteInventory(t, g)
	fx := scanFactsOf(t, path, g.Name)
	stand := []rules.Finding{{Rule: "broker-open-files", Status: rules.Fail, Fix: &rules.Fix{Summary: "raise the open-files limit", NoFile: 100000}}}
	plan := remediate.PlanHost(g.Name, fx, stand, remediate.Selector{})
	if len(plan.Changes) != 1 || !plan.RestartRequired() {
		t.Fatalf("plan %+v: want the drop-in, restart required", plan)
	}
	inv, err := inventory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var gates []string
	ro := &apply.Rollout{Waves: [][]string{{g.Name}}, Gate: func(_ context.Context, done, next []string) error {
		gates = append(gates, time.Now().Format("15:04:05.000"))
		return nil
	}}
	opt := apply.Options{JournalPath: t.TempDir() + "/journal.json", Timeout: 5 * time.Minute, Log: func(s string) { t.Log(s) },
		Rollout: ro, Restart: &apply.RestartOptions{Timeout: 3 * time.Minute, Watch: 3 * time.Second}}
	ctx := context.Background()
	j, err := apply.Apply(ctx, []apply.Host{{Inv: inv.Hosts[0], Facts: fx, Findings: stand, Plan: plan}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	hj := j.Hosts[0]
	r := hj.Restart
	if hj.Status != remediate.StatusVerified || r == nil {
		t.Fatalf("apply: %s: %s, restart %+v", hj.Status, hj.Error, r)
	}
	t.Logf("restart: unit %s, pid %d → %d, Send-Q %d (want %d), open files %q (want %q), in force %v, error %q",
		r.Unit, r.OldPID, r.NewPID, r.Backlog, r.WantBacklog, r.NoFile, r.WantNoFile, r.InForce, r.Error)
	if r.Before != nil && r.After != nil && r.Deltas != nil {
		t.Logf("counters before: %s\ncounters after: %s\ndeltas: %s", r.Before, r.After, r.Deltas)
	}
	if r.Unit != "kafka.service" || r.OldPID == 0 || r.NewPID == 0 || r.NewPID == r.OldPID {
		t.Errorf("pids %d → %d: want a new process", r.OldPID, r.NewPID)
	}
	if !r.InForce || r.WantBacklog == 0 || r.Backlog != r.WantBacklog || r.NoFile != "100000 100000" {
		t.Errorf("not in force: %+v", r)
	}
	if r.Before == nil || r.After == nil || r.Deltas == nil || r.Critical != "" {
		t.Errorf("watch: before %v after %v deltas %v critical %q", r.Before, r.After, r.Deltas, r.Critical)
	}
	if got := slow(t, g, `p=$(systemctl show -p MainPID kafka.service); echo "${p#MainPID=}"`); got == "" {
		t.Error("no MainPID after the restart")
	}
	if len(gates) < 2 {
		t.Errorf("gate calls %v: want one before and one after the wave", gates)
	}
	if _, err := apply.Rollback(ctx, inv.Hosts, j, apply.Options{Timeout: 5 * time.Minute}); err != nil {
		t.Error(err)
	}
}
