package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
)

// FixJob is what kaudit fix does with a scan: print the plan, or with
// Apply carry it out.
type FixJob struct {
	Selector   remediate.Selector
	Apply, Yes bool        // Yes: do not ask before applying
	Config     ApplyConfig // Runner, timeouts, Batch, MaxFailures; RunID, JournalPath and Log are set here
	JournalDir string      // with Apply: where the journal goes (Fix makes it from the --journal-dir flag)
	// Rollback is the arguments of kaudit rollback that select the run's
	// hosts, for the undo line (Fix sets them: the inventory, or the
	// cluster flags and --ssh-config, and --journal-dir when given).
	Rollback []string
	Width    int // columns the plan is laid out for
	// Rollout is how the hosts are rolled (its Batch is Config.Batch,
	// which Fix copies into it).
	Rollout RolloutConfig
	// cluster is --bootstrap's cluster (Fix sets it): the gate reads it.
	cluster *ClusterSource
	// resume are the arguments of kaudit fix that select this run's
	// fleet (Fix sets them), for the command that continues a stopped run.
	resume []string
	// AcceptClusterMismatch names the inventory hosts changed although
	// their meta.properties names another cluster than --bootstrap's
	// (--accept-cluster-mismatch HOST): each a host of the fleet, never
	// one the cluster alone named, which must be proven.
	AcceptClusterMismatch []string
	// refused are the hosts not changed (ClusterSource.refusals).
	refused Refusals
}

// Check validates the apply's fan-out as the person asked for it.
func (j FixJob) Check() error {
	if j.Config.Batch < 1 {
		return errors.New("--batch must be at least 1")
	}
	if j.Config.MaxFailures < 0 {
		return errors.New("--max-failures must be 0 or more")
	}
	j.Rollout.Batch = j.Config.Batch
	if err := j.Rollout.Check(); err != nil {
		return err
	}
	if j.Rollout.Resume != "" && !remediate.ValidRunID(j.Rollout.Resume) {
		return fmt.Errorf("--resume %q is not a run id", j.Rollout.Resume)
	}
	if j.Rollout.Restart && !j.Apply {
		return errors.New("--restart restarts brokers an apply changed: give --apply too")
	}
	if j.Rollout.Resume != "" && !j.Apply {
		return errors.New("--resume continues an apply: give --apply too")
	}
	return nil
}

// Fix is kaudit fix: the hosts of f (without an inventory, the brokers
// of cfg.Cluster: loadOrDiscover) scanned with cfg (a progress bar
// unless quiet), then fixReport. With j.Apply the journal directory
// (journalDir of j.JournalDir, the --journal-dir flag) is made before
// connecting anywhere: an apply without one would be refused later.
func Fix(ctx context.Context, c Console, f Fleet, cfg Config, quiet bool, j FixJob) error {
	inv, hosts, err := f.loadOrDiscover(ctx, c, cfg.Cluster)
	if err != nil {
		return err
	}
	if err := checkAccepted(j.AcceptClusterMismatch, hosts, cfg.Cluster); err != nil {
		return err
	}
	if cfg.Cluster != nil {
		if _, err := cfg.Cluster.ask(ctx); err != nil {
			return err
		}
	}
	cfg.ClientsGroup, j.Rollback = clientsGroup(cfg.ClientsGroup, inv), f.rollbackTarget(cfg.Cluster)
	j.cluster, j.resume = cfg.Cluster, f.fixTarget(cfg.Cluster)
	if j.Apply {
		if j.JournalDir != "" {
			j.Rollback = append(j.Rollback, "--journal-dir", j.JournalDir)
			j.resume = append(j.resume, "--journal-dir", j.JournalDir)
		}
		if j.JournalDir, err = journalDir(j.JournalDir); err != nil {
			return err
		}
	}
	runner, err := f.connect(c, hosts, &cfg.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	cfg.Runner = runner
	r, err := auditOnTerminal(ctx, c, hosts, cfg, quiet)
	if err != nil {
		return err
	}
	warnCluster(c, r.Cluster)
	j.Config.Runner, j.Config.Timeout, j.Config.ConnectTimeout = cfg.Runner, cfg.Timeout, cfg.ConnectTimeout
	j.Config.Probes = cfg.ProbeRecords
	if j.Apply {
		j.Config.Batch = fitWarned(c, j.Config.Batch)
		j.Rollout.Batch = j.Config.Batch
	}
	j.refused = cfg.Cluster.refusals(r, j.AcceptClusterMismatch)
	return fixReport(ctx, c, r, hosts, j)
}

// checkAccepted refuses an --accept-cluster-mismatch that names no host
// of the fleet, a host only the cluster named, or comes without a
// cluster to mismatch.
func checkAccepted(accept []string, hosts []inventory.Host, src *ClusterSource) error {
	if len(accept) == 0 {
		return nil
	}
	if src == nil {
		return located.Hint(errors.New("--accept-cluster-mismatch needs --bootstrap: without a cluster no host can mismatch one"), "drop it, or give --bootstrap")
	}
	for _, a := range accept {
		switch {
		case src.named != nil:
			return located.Hint(fmt.Errorf("--accept-cluster-mismatch %s: without an inventory every host is named by the cluster alone, and kaudit changes such a host only when its meta.properties proves it", a), "give an inventory that lists the host")
		case !slices.ContainsFunc(hosts, func(h inventory.Host) bool { return h.Name == a }):
			return located.Hint(fmt.Errorf("--accept-cluster-mismatch %s: no such host in this run", a), "name a host of the inventory (after --limit) by its inventory name")
		}
	}
	return nil
}

// fixReport prints the plan of r's hosts, or with j.Apply shows it, asks, and
// carries it out (Apply), then prints the run. Its verdicts: Interrupted
// (the scan or the run), NotApplied (a host not changed as planned),
// Unaudited (hosts without a plan).
func fixReport(ctx context.Context, c Console, r *report.Report, hosts []inventory.Host, j FixJob) error {
	if r.Interrupted {
		WritePlan(c.Stdout, r, j.Selector, j.refused, j.Width)
		return fail(Interrupted, "interrupted while scanning: nothing changed")
	}
	fp := PlanFix(r, hosts, j.Selector, j.refused)
	j.Rollout.Racks = racksOf(hosts)
	ro := PlanRollout(r, fp.changing, j.Rollout)
	if !j.Apply {
		WritePlan(c.Stdout, r, j.Selector, j.refused, j.Width)
		WriteRollout(c.Stdout, ro, fp.restart)
		return unaudited(r)
	}
	WriteFixPlan(c.Stdout, fp, j.Width)
	if fp.Changes == 0 {
		return cmp.Or(refusedVerdict(fp), unaudited(r))
	}
	WriteRollout(c.Stdout, ro, fp.restart)
	resume, err := j.resumed()
	if err != nil {
		return err
	}
	if ok, err := c.Confirm(j.Yes, "apply "+fp.What()+"?", "fix --apply"); !ok || err != nil {
		return err
	}
	gate := newHealthGate(c, ro, r.Cluster, j.cluster)
	j.Config.Rollout, j.Config.Resume = &apply.Rollout{Waves: ro.Waves, Gate: gate.Gate}, resume
	j.Config.Restart = ro.restartOptions()
	return cmp.Or(applyFix(ctx, c, r, fp, j), refusedVerdict(fp))
}

// refusedVerdict is NotApplied when fp refused a host (listed in the
// plan as not changed), else nil.
func refusedVerdict(fp *FixPlan) error {
	if len(fp.Refused) == 0 {
		return nil
	}
	return fail(NotApplied, "%d host(s) not proven a broker of the cluster were not changed (the plan says why)", len(fp.Refused))
}

// applyFix is fix --apply once confirmed.
func applyFix(ctx context.Context, c Console, r *report.Report, fp *FixPlan, j FixJob) error {
	cfg := j.Config
	cfg.Now = c.Now
	cfg.RunID = remediate.NewRunID(c.Now())
	if cfg.Resume != nil {
		cfg.RunID = cfg.Resume.RunID
	}
	cfg.JournalPath = journalPath(j.JournalDir, cfg.RunID)
	cfg.Log = func(line string) { fmt.Fprintf(c.Stderr, "kaudit: %s\n", line) }
	sctx, stop := interruptible(ctx)
	defer stop()
	writeApplying(c.Stdout, fp, cfg)
	jr, err := applyPlan(sctx, fp, cfg)
	if jr == nil {
		return err
	}
	writeRun(c.Stdout, jr)
	if jr.ChangedAnything() {
		writeUndo(c.Stdout, cfg, j.Rollback)
	} else {
		fmt.Fprintf(c.Stdout, "journal: %s\nrun %s changed no host: nothing to undo\n", cfg.JournalPath, cfg.RunID)
	}
	var gateStop *apply.GateError
	if errors.As(err, &gateStop) {
		writeStopped(c.Stdout, jr, j.resumeArgs())
	} else if err != nil {
		c.Warnf("%v", err)
	}
	switch failed := FailedHosts(jr); {
	case sctx.Err() != nil && ctx.Err() == nil:
		return fail(Interrupted, "interrupted: hosts not started were left unchanged")
	case gateStop != nil:
		return fail(NotApplied, "the rollout stopped before its end: see above and the journal")
	case failed > 0:
		return fail(NotApplied, "%d host(s) not changed as planned: see above and the journal", failed)
	}
	return unaudited(r)
}

// unaudited is the verdict of a plan when some hosts of r could not be
// audited: they have none.
func unaudited(r *report.Report) error {
	if r.Summary.Unreachable > 0 {
		return fail(Unaudited, "%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)
	}
	return nil
}
