package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

// applyHost runs one host through read, apply, verify (and restore on
// failure). It reports whether the host ended verified or unchanged.
//
// When ctx ends (Ctrl-C), the step in progress is not cut: every step runs
// under its own deadline (opt.Timeout), a host not yet changed is left
// unchanged ("interrupted before any change"), and one whose apply script
// ran is verified and, on failure, restored.
func applyHost(ctx context.Context, h Host, opt Options, rec *journal) bool {
	name := h.Inv.Name
	interrupted := ctx
	ctx = context.WithoutCancel(ctx)
	changes, _ := Split(h.Plan, h.Findings)
	fail := func(status remediate.HostStatus, msg string) bool {
		rec.update(name, func(hj *remediate.HostJournal) { hj.Status = status; hj.Error = msg })
		rec.logf("%s: %s: %s", name, status, msg)
		return false
	}

	files, keys, nics := filesOf(changes)
	lease := opt.lease()
	st, err := read(ctx, opt, h.Inv, files, keys, nics, &lease)
	var held *HeldError
	if errors.As(err, &held) && held.goneHere(opt.Operator) {
		// Its kaudit ran here, as this user, and is gone (killed): its
		// lease is stale before it expires.
		rec.logf("%s: run %s holds the lease, but its kaudit (pid %d on this machine) is gone: taking the lease over; that run may have left changes here: kaudit rollback --run %s undoes them",
			name, held.RunID, held.PID, held.RunID)
		lease.Takeover = held.RunID
		st, err = read(ctx, opt, h.Inv, files, keys, nics, &lease)
	}
	if errors.As(err, &held) {
		return fail(remediate.StatusUnchanged, held.Error())
	}
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	// The run holds the host's lease from here: its last step there
	// releases it, whatever the outcome.
	defer release(ctx, opt, h.Inv, rec)
	for _, n := range st.notes {
		rec.logf("%s", n)
	}
	prep, err := prepare(opt.RunID, changes, st)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	if interrupted.Err() != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: interrupted before any change")
	}
	// Before the apply script starts, every item is one it may change
	// (a kaudit killed meanwhile leaves that); its results say (runApply).
	for i := range prep.backups {
		prep.backups[i].Changed = remediate.ChangedMaybe
		if prep.backups[i].Written == "" && i < len(prep.params.Files) {
			prep.backups[i].Written = SHA256(prep.params.Files[i].Content)
		}
	}
	for i := range prep.runtime {
		prep.runtime[i].Changed = remediate.ChangedMaybe
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

	after, err := verify(ctx, h, opt, changes)
	if err != nil {
		return restore(ctx, h, opt, rec, "verification failed: "+err.Error())
	}
	res := remediate.ResidualOf(after, rules.Evaluate(after, rules.DefaultProfile()), h.Plan.RestartRequired())
	rec.update(name, func(hj *remediate.HostJournal) {
		hj.Status = remediate.StatusVerified
		hj.Error = ""
		hj.Residual = res
	})
	msg := fmt.Sprintf("%s: verified %d change(s)", name, len(changes))
	if opt.Restart != nil {
		rec.logf("%s", msg)
		return restartHost(ctx, h, opt, rec, after, changes, false)
	}
	if h.Plan.RestartRequired() {
		msg += "; broker restart required for the Kafka changes to take effect (not restarted: --restart not given)"
	}
	rec.logf("%s", msg)
	if res.KernelOpen {
		rec.logf("%s: %s", name, res.Text())
	}
	return true
}

// runApply runs the apply step. It returns "" when the script finished,
// else why not and whether it may have changed anything before it
// stopped (then the host is restored).
func runApply(ctx context.Context, h Host, opt Options, rec *journal, prep *prepared) (why string, changed bool) {
	marker := NewMarker()
	prep.params.Marker = marker
	prep.params.Lease = opt.lease()
	script, err := ApplyScript(prep.params)
	if err != nil {
		rec.update(h.Inv.Name, func(hj *remediate.HostJournal) { hj.SetChanged(nil, nil); notChanged(hj) })
		return err.Error(), false
	}
	rec.logf("%s: applying %d running value(s), %d file(s); backups in %s", h.Inv.Name, len(prep.params.Runtime), len(prep.params.Files), RunDir(opt.RunID))
	out, runErr := runScript(ctx, opt, h.Inv, script, "the apply script")
	var rs remote.Results
	var wordErr error
	if out != nil {
		rs, wordErr = remote.ParseSteps(out.Stdout, marker, h.Inv.Name, applyWords)
	}
	recordWritten(h.Inv.Name, rec, rs, len(prep.params.Files))
	cf, cv := prep.params.Changed(rs)
	rec.update(h.Inv.Name, func(hj *remediate.HostJournal) { hj.SetChanged(cf, cv) })
	switch f := rs.FirstFailure(); {
	case wordErr != nil:
		return "apply: " + wordErr.Error(), true
	case runErr == nil && rs.Find("done") != nil:
		return "", false
	case f != nil && f.Step == "space" && len(f.Detail) == 4:
		return fmt.Sprintf("%s on %s: %s of %s KiB free, the backups need %s KiB; make room there and re-run", f.Detail[0], h.Inv.Name, f.Detail[1], f.Detail[2], f.Detail[3]), false
	case f != nil && f.Step == "lease":
		return leaseText(h.Inv.Name, f), false
	case f != nil:
		return fmt.Sprintf("step %s failed: %s%s", f.Step, f.Text(), stderrTail(out)), changedAnything(rs, f.Step, prep.params.ChangeSteps())
	case runErr != nil:
		return "apply: " + runErr.Error(), true
	}
	return "apply: the script did not finish" + stderrTail(out), true
}

// notChanged marks every item of hj as not changed by the run.
func notChanged(hj *remediate.HostJournal) {
	for i := range hj.Backups {
		hj.Backups[i].Changed = remediate.ChangedNo
	}
	for i := range hj.Runtime {
		hj.Runtime[i].Changed = remediate.ChangedNo
	}
}

// recordWritten journals the hash each file step read back after
// writing (Backup.Written), for the files the script got to.
func recordWritten(name string, rec *journal, rs remote.Results, files int) {
	rec.update(name, func(hj *remediate.HostJournal) {
		for i := 0; i < files && i < len(hj.Backups); i++ {
			if r := rs.Find(fileStep(i)); r != nil && r.OK && len(r.Detail) == 1 && reSHA.MatchString(r.Detail[0]) {
				hj.Backups[i].Written = r.Detail[0]
			}
		}
	})
}

// changedAnything reports whether the apply script may have changed
// something before failing at step failed: only its StepChange steps
// change anything.
func changedAnything(rs remote.Results, failed string, steps map[string]StepKind) bool {
	return steps[failed] == StepChange || slices.ContainsFunc(rs, func(r remote.Result) bool { return steps[r.Step] == StepChange })
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
	// Force: the host is restored within its own run, nobody edited it
	// since; a value a failed step left half-set must be restored too.
	opt.Force = true
	res, err := rollbackHost(rctx, h.Inv, opt, rec.j.RunID, hj)
	if err != nil {
		rec.update(name, func(j *remediate.HostJournal) {
			j.Status = remediate.StatusFailed
			j.Error = located.WithHint(why+"; restoring FAILED: "+err.Error(), "retry with kaudit rollback --run "+rec.j.RunID)
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
