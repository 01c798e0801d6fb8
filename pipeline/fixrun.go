package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

// FixJob is what kaudit fix does with a scan: print the plan, or with
// Apply carry it out.
type FixJob struct {
	Selector   remediate.Selector
	Apply, Yes bool        // Yes: do not ask before applying
	Config     ApplyConfig // Runner, timeouts, Batch, MaxFailures; RunID, JournalPath and Log are set here
	JournalDir string      // with Apply: where the journal goes (FixFleet makes it from the --journal-dir flag)
	// Rollback is the arguments of kaudit rollback that select the run's
	// hosts, for the undo line (FixFleet sets them: the inventory, or the
	// cluster flags and --ssh-config, and --journal-dir when given).
	Rollback []string
	Width    int // columns the plan is laid out for
}

// Check validates the apply's fan-out as the person asked for it.
func (j FixJob) Check() error {
	if j.Config.Batch < 1 {
		return errors.New("--batch must be at least 1")
	}
	if j.Config.MaxFailures < 0 {
		return errors.New("--max-failures must be 0 or more")
	}
	return nil
}

// Fix prints the plan of r's hosts, or with j.Apply shows it, asks, and
// carries it out (Apply), then prints the run. Its verdicts: Interrupted
// (the scan or the run), NotApplied (a host not changed as planned),
// Unaudited (hosts without a plan).
func Fix(ctx context.Context, c Console, r *report.Report, hosts []inventory.Host, j FixJob) error {
	if r.Interrupted {
		WritePlan(c.Stdout, r, j.Selector, j.Width)
		return Fail(Interrupted, "interrupted while scanning: nothing changed")
	}
	if !j.Apply {
		WritePlan(c.Stdout, r, j.Selector, j.Width)
		return unaudited(r)
	}
	fp := PlanFix(r, hosts, j.Selector)
	WriteFixPlan(c.Stdout, fp, j.Width)
	if fp.Changes == 0 {
		return unaudited(r)
	}
	if ok, err := c.Confirm(j.Yes, "apply "+fp.What()+"?", "fix --apply"); !ok || err != nil {
		return err
	}
	return applyFix(ctx, c, r, fp, j)
}

// applyFix is fix --apply once confirmed.
func applyFix(ctx context.Context, c Console, r *report.Report, fp *FixPlan, j FixJob) error {
	cfg := j.Config
	cfg.Now = c.Now
	cfg.RunID = remediate.NewRunID(c.Now())
	cfg.JournalPath = JournalPath(j.JournalDir, cfg.RunID)
	cfg.Log = func(line string) { fmt.Fprintf(c.Stderr, "kaudit: %s\n", line) }
	sctx, stop := Interruptible(ctx)
	defer stop()
	WriteApplying(c.Stdout, fp, cfg)
	jr, err := Apply(sctx, fp, cfg)
	if jr == nil {
		return err
	}
	WriteRun(c.Stdout, jr)
	if jr.ChangedAnything() {
		WriteUndo(c.Stdout, cfg, j.Rollback)
	} else {
		fmt.Fprintf(c.Stdout, "journal: %s\nrun %s changed no host: nothing to undo\n", cfg.JournalPath, cfg.RunID)
	}
	if err != nil {
		c.Warnf("%v", err)
	}
	switch failed := Failed(jr); {
	case sctx.Err() != nil && ctx.Err() == nil:
		return Fail(Interrupted, "interrupted: hosts not started were left unchanged")
	case failed > 0:
		return Fail(NotApplied, "%d host(s) not changed as planned: see above and the journal", failed)
	}
	return unaudited(r)
}

// unaudited is the verdict of a plan when some hosts of r could not be
// audited: they have none.
func unaudited(r *report.Report) error {
	if r.Summary.Unreachable > 0 {
		return Fail(Unaudited, "%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)
	}
	return nil
}
