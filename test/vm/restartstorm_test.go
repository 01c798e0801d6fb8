//go:build vm

package vm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/rules"
)

// TestRestartStormStopsRollout: fix --apply --restart's watch on the
// kernel with commit 909172a reverted (the talk's bug, proven by kaudit
// probe and kept in its records, so the verify's re-gather judges
// kernel-synack-wscale fail/probe). Only the open-files drop-in is
// planned (a change that needs a restart): SYN cookies stay at the
// kernel's default 1 and the broker's backlog at 50. After the restart,
// while the watch runs, a bounded burst of 400 connects from inside the
// guest (netem 300 ms on lo, as TestSyncookiesFiredRealBurst) overflows
// the restarted broker's SYN queue and completes by SYN cookie: the watch
// reads SyncookiesSent grown and stops the rollout with the critical
// verdict (a *GateError, which fix turns into exit 4 with "stopped:";
// the journal records the stop). The stand-in gate stands for the
// cluster's health (the guests forward only SSH, so no --bootstrap can
// reach the broker); the burst runs in the gate after the restarted
// broker's wave, i.e. inside the watch's window (the counters are read
// just before the restart and again after the gate and --watch).
func TestRestartStormStopsRollout(t *testing.T) {
	g := Boot(t, Options{Name: "restart-storm", Flavour: Reverted})
	installBroker(t, g)
	// The unit's own limit, below the drop-in's (the Go broker raises its
	// soft limit to the hard one).
	slow(t, g, `sed -i 's/^\[Service\]$/[Service]\nLimitNOFILE=4096/' /etc/systemd/system/kafka.service && systemctl daemon-reload && systemctl restart kafka.service && sleep 2`)
	path := WriteInventory(t, g)
	records := filepath.Join(t.TempDir(), "probes")
	rep, pr := scanJSON(t, "probe", path, "--timeout", "5m", "--connect-timeout", "1m", "--probe-budget", "10s", "--probe-records", records)
	if k := findingOf(t, rep, g.Name, rules.RuleKernelSynackWscale); k.Status != rules.Fail || k.Source != rules.SourceProbe {
		t.Fatalf("reverted kernel: kernel-synack-wscale %s/%s (probe exit %d), want fail/probe: %s", k.Status, k.Source, pr.code, k.Reason)
	}
	if got := strings.TrimSpace(g.MustRun(t, "cat /proc/sys/net/ipv4/tcp_syncookies")); got != "1" {
		t.Fatalf("tcp_syncookies %s, want the default 1", got)
	}
	fx := scanFactsOf(t, path, g.Name)
	stand := []rules.Finding{{Rule: "broker-open-files", Status: rules.Fail, Fix: &rules.Fix{Summary: "raise the open-files limit", NoFile: 100000}}}
	plan := remediate.PlanHost(g.Name, fx, stand, remediate.Selector{})
	if len(plan.Changes) != 1 || plan.Changes[0].Kind != remediate.KindUnitDropIn || !plan.RestartRequired() {
		t.Fatalf("plan %+v: want the drop-in alone, restart required", plan)
	}
	inv, err := inventory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var gates []string
	var burstSent int
	ro := &apply.Rollout{Waves: [][]string{{g.Name}}, Gate: func(_ context.Context, done, next []string) error {
		gates = append(gates, time.Now().Format("15:04:05.000"))
		if len(done) == 0 {
			return nil
		}
		// The restarted broker's clients reconnect at once.
		before := netstat(t, g, "SyncookiesSent")
		slow(t, g, burst)
		burstSent = netstat(t, g, "SyncookiesSent") - before
		t.Logf("burst after the restart: SyncookiesSent +%d, ListenOverflows %d, ListenDrops %d", burstSent, netstat(t, g, "ListenOverflows"), netstat(t, g, "ListenDrops"))
		return nil
	}}
	opt := apply.Options{JournalPath: filepath.Join(t.TempDir(), "journal.json"), Timeout: 5 * time.Minute, ConnectTimeout: time.Minute, Log: func(s string) { t.Log(s) },
		Probes: &probe.Records{Dir: records}, Rollout: ro, Restart: &apply.RestartOptions{Timeout: 3 * time.Minute, Watch: 5 * time.Second}}
	ctx := context.Background()
	j, err := apply.Apply(ctx, []apply.Host{{Inv: inv.Hosts[0], Facts: fx, Findings: stand, Plan: plan}}, opt)
	if j == nil {
		t.Fatal(err)
	}
	hj := j.Hosts[0]
	r := hj.Restart
	if hj.Status != remediate.StatusVerified || r == nil || hj.Residual == nil {
		t.Fatalf("apply: %s: %s, restart %+v, residual %+v", hj.Status, hj.Error, r, hj.Residual)
	}
	t.Logf("restart: unit %s, pid %d → %d, Send-Q %d (want %d), open files %q, in force %v; residual kernel %s/%s, syncookies %s",
		r.Unit, r.OldPID, r.NewPID, r.Backlog, r.WantBacklog, r.NoFile, r.InForce, hj.Residual.Kernel, hj.Residual.Source, hj.Residual.Syncookies)
	if r.Before != nil && r.After != nil && r.Deltas != nil {
		t.Logf("counters before: %s\ncounters after: %s\ndeltas: %s", r.Before, r.After, r.Deltas)
	}
	t.Logf("gate calls %v; the rollout's error: %v", gates, err)
	if r.NewPID == 0 || r.NewPID == r.OldPID || !r.InForce || r.Backlog != 50 {
		t.Errorf("restart %d → %d, Send-Q %d, in force %v: want a new process listening with backlog 50", r.OldPID, r.NewPID, r.Backlog, r.InForce)
	}
	if hj.Residual.Kernel != rules.Fail || hj.Residual.Syncookies != "1" {
		t.Errorf("residual: kernel %s, syncookies %q: want fail (the probe's record) with cookies still 1", hj.Residual.Kernel, hj.Residual.Syncookies)
	}
	if burstSent <= 0 || r.Deltas == nil || r.Deltas.SyncookiesSent <= 0 || r.Deltas.SyncookiesSent < int64(burstSent) {
		t.Fatalf("watch deltas %v, burst %d: want the burst's SYN cookies counted", r.Deltas, burstSent)
	}
	var ge *apply.GateError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "CRITICAL: "+g.Name+": ") || !strings.Contains(err.Error(), "SYN cookie(s) sent") {
		t.Fatalf("rollout error %v: want the gate's stop with the critical verdict", err)
	}
	if r.Critical == "" || !strings.Contains(r.Critical, "the producers connected in that window run with the wrong window scale") {
		t.Errorf("journal's critical verdict %q", r.Critical)
	}
	if j.Stopped == nil || !strings.Contains(j.Stopped.Reason, "CRITICAL") {
		t.Errorf("journal: stopped %+v, want the critical stop recorded", j.Stopped)
	}
	rollbackRestarts(t, g, inv.Hosts, j, r.NewPID)
}

// rollbackRestarts is rollback --restart's machinery on the guest after
// the run above: the drop-in removed (a change that needed a restart),
// kafka.service restarted through the same restart step, gated, its
// Send-Q the restored backlog (50), the unit's own open-files limit
// (4096) in force again, the counters watched.
func rollbackRestarts(t *testing.T, g *Guest, hosts []inventory.Host, j *remediate.Journal, pid int) {
	t.Helper()
	var gates []string
	ro := &apply.Rollout{Waves: [][]string{{g.Name}}, Gate: func(_ context.Context, done, next []string) error {
		gates = append(gates, strings.Join(done, ",")+">"+strings.Join(next, ","))
		return nil
	}}
	res, err := apply.Rollback(context.Background(), hosts, j, apply.Options{Timeout: 5 * time.Minute, ConnectTimeout: time.Minute, Log: func(s string) { t.Log(s) },
		Rollout: ro, Restart: &apply.RestartOptions{Timeout: 3 * time.Minute, Watch: 3 * time.Second}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("rollback --restart: %v %+v", err, res)
	}
	r := j.Hosts[0].Restart
	if r == nil {
		t.Fatal("rollback --restart: no restart journalled")
	}
	t.Logf("rollback restart: %s, pid %d → %d, Send-Q %d (want %d), open files %q, in force %v, deltas %v, critical %q; gates %q",
		res[0].Detail, r.OldPID, r.NewPID, r.Backlog, r.WantBacklog, r.NoFile, r.InForce, r.Deltas, r.Critical, gates)
	if r.OldPID != pid || r.NewPID == pid || r.NewPID == 0 || !r.InForce || r.Backlog != 50 || r.WantNoFile != "" || r.Deltas == nil {
		t.Errorf("rollback restart %+v: want pid %d replaced, backlog 50 in force, the counters watched", r, pid)
	}
	lim := strings.TrimSpace(slow(t, g, `p=$(systemctl show -p MainPID kafka.service); awk '/^Max open files/ { print $4, $5 }' /proc/${p#MainPID=}/limits`))
	if lim != "4096 4096" {
		t.Errorf("after rollback --restart: open files %q, want the unit's own 4096", lim)
	}
	if want := []string{">" + g.Name, g.Name + ">"}; strings.Join(gates, " ") != strings.Join(want, " ") {
		t.Errorf("gates %q, want %q", gates, want)
	}
}
