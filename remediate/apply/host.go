package apply

import (
	"context"
	"fmt"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// applyHost runs one host through read, apply, verify (and restore on
// failure). It reports whether the host ended verified or unchanged.
func applyHost(ctx context.Context, h Host, opt Options, rec *journal) bool {
	name := h.Inv.Name
	changes, _ := Split(h.Plan, h.Findings)
	fail := func(status remediate.HostStatus, msg string) bool {
		rec.update(name, func(hj *remediate.HostJournal) { hj.Status = status; hj.Error = msg })
		rec.logf("%s: %s: %s", name, status, msg)
		return false
	}

	files, keys, nics := filesOf(changes)
	st, err := read(ctx, opt, h.Inv, files, keys, nics)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	prep, err := prepare(opt.RunID, changes, st)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Backups = prep.backups; hj.Runtime = prep.runtime })
	if len(prep.params.Files) == 0 && len(prep.params.Runtime) == 0 {
		rec.update(name, func(hj *remediate.HostJournal) {
			hj.Status = remediate.StatusUnchanged
			hj.NoOp = true
			hj.Error = "already as planned when read: nothing changed"
		})
		rec.logf("%s: already as planned: nothing changed", name)
		return true
	}

	if why, changed := runApply(ctx, h, opt, rec, prep); why != "" {
		if !changed {
			return fail(remediate.StatusUnchanged, "nothing changed: "+why)
		}
		return restore(ctx, h, opt, rec, why)
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Status = remediate.StatusApplied })

	if err := verify(ctx, h, opt, changes); err != nil {
		return restore(ctx, h, opt, rec, "verification failed: "+err.Error())
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Status = remediate.StatusVerified; hj.Error = "" })
	msg := fmt.Sprintf("%s: verified %d change(s)", name, len(changes))
	if h.Plan.RestartRequired() {
		msg += "; broker restart required for the Kafka changes to take effect (kaudit never restarts it)"
	}
	rec.logf("%s", msg)
	return true
}

// runApply runs the apply step. It returns "" when the script finished,
// else why not and whether it may have changed anything before it
// stopped (then the host is restored).
func runApply(ctx context.Context, h Host, opt Options, rec *journal, prep *prepared) (why string, changed bool) {
	marker := NewMarker()
	prep.params.Marker = marker
	script, err := ApplyScript(prep.params)
	if err != nil {
		return err.Error(), false
	}
	rec.logf("%s: applying %d running value(s), %d file(s); backups in %s", h.Inv.Name, len(prep.params.Runtime), len(prep.params.Files), RunDir(opt.RunID))
	out, runErr := runScript(ctx, opt, h.Inv, script, "the apply script")
	var rs remote.Results
	if out != nil {
		rs = remote.ParseResults(out.Stdout, marker)
	}
	switch f := rs.FirstFailure(); {
	case runErr == nil && rs.Find("done") != nil:
		return "", false
	case f != nil:
		return fmt.Sprintf("step %s failed: %s%s", f.Step, f.Text(), stderrTail(out)), changedAnything(rs, f.Step)
	case runErr != nil:
		return "apply: " + runErr.Error(), true
	}
	return "apply: the script did not finish" + stderrTail(out), true
}

// changedAnything reports whether the apply script may have changed
// something before failing at step failed: only the running-value and
// file steps (changesHost) change anything.
func changedAnything(rs remote.Results, failed string) bool {
	if changesHost(failed) {
		return true
	}
	for _, r := range rs {
		if changesHost(r.Step) {
			return true
		}
	}
	return false
}

// restore rolls a host back after a failure and journals the outcome.
func restore(ctx context.Context, h Host, opt Options, rec *journal, why string) bool {
	name := h.Inv.Name
	rec.logf("%s: %s; restoring from the backups", name, why)
	var hj remediate.HostJournal
	rec.update(name, func(j *remediate.HostJournal) { hj = *j })
	// Restore even when interrupted: a half-applied host is worse.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opt.Timeout)
	defer cancel()
	res, err := rollbackHost(rctx, h.Inv, opt, rec.j.RunID, hj)
	if err != nil {
		rec.update(name, func(j *remediate.HostJournal) {
			j.Status = remediate.StatusFailed
			j.Error = why + "; restoring FAILED: " + err.Error() + " (retry with kaudit rollback --run " + rec.j.RunID + ")"
		})
		rec.logf("%s: restoring failed: %v", name, err)
		return false
	}
	rec.update(name, func(j *remediate.HostJournal) {
		j.Status = remediate.StatusRolledBack
		j.Error = why + "; restored from the backups (" + res.String() + ")"
	})
	rec.logf("%s: restored (%s)", name, res)
	return false
}
