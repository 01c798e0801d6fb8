package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// RollbackResult is one host's outcome of Rollback.
type RollbackResult struct {
	Host   string
	Detail string // per-item summary: "2 restored, 1 removed, 3 unchanged, 1 kept"
	// Kept: each file or running value left alone because it changed
	// since the run, and how to overwrite it anyway.
	Kept []string
	// Refused: each item the local journal holds that the run's manifest
	// on the host does not hold as the journal says (HostJournal.Reconcile):
	// not restored. The host then counts as not rolled back as planned.
	Refused []string
	// Nothing: the run changed nothing on the host (its journal owns no
	// item there, or the host has no manifest of it: its apply stopped
	// before its first change), so nothing was rolled back.
	Nothing bool
	Err     error
}

// restored counts a restore's items by outcome.
type restored struct {
	Restored, Removed, Unchanged, Kept int
	kept                               []string // what each kept item is, and why
	nothing                            bool     // the host has no manifest of the run: it changed nothing there
	// undone are the items the restore changed back: file paths and
	// running values' keys (a restart after it: UndoneRestarts).
	undone []string
}

// changed reports whether the restore changed anything on the host.
func (c restored) changed() bool { return c.Restored+c.Removed > 0 }

// String is the summary: "2 restored, 1 removed, 3 unchanged", omitting
// zero counts.
func (c restored) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Restored, string(wordRestored)}, {c.Removed, string(wordRemoved)}, {c.Unchanged, string(wordUnchanged)}, {c.Kept, string(wordKept)}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

// count adds one ok restore step's result about item.
func (c *restored) count(r remote.Result, item restoreItem) {
	switch r.Word {
	case wordKept:
		c.Kept++
		if item.kept != nil {
			c.kept = append(c.kept, item.kept(r.Text()))
		}
	case wordRestored:
		c.Restored++
		c.undone = append(c.undone, item.target)
	case wordRemoved:
		c.Removed++
		c.undone = append(c.undone, item.target)
	case wordUnchanged:
		c.Unchanged++
	}
}

// Rollback restores every host of j that has backups or running values
// from the run's backups on the host (see RollbackScript), opt.Batch at a
// time, updates the journal's statuses and saves it at opt.JournalPath.
// Hosts of j missing from inv are reported as errors. It is idempotent.
// With opt.Rollout the error includes the gate's refusal (a *GateError).
func Rollback(ctx context.Context, inv []inventory.Host, j *remediate.Journal, opt Options) ([]RollbackResult, error) {
	opt.defaults()
	byName := map[string]inventory.Host{}
	for _, h := range inv {
		byName[h.Name] = h
	}
	rec := &journal{j: j, path: opt.JournalPath, log: opt.Log}
	var out []RollbackResult
	var todo []remediate.HostJournal
	for _, hj := range j.Hosts {
		if len(hj.Backups) == 0 && len(hj.Runtime) == 0 {
			continue
		}
		if !hj.Owns() {
			if _, ok := byName[hj.Host]; ok {
				out = append(out, RollbackResult{Host: hj.Host, Nothing: true, Detail: "run " + j.RunID + " changed nothing here"})
			}
			continue
		}
		if _, ok := byName[hj.Host]; !ok {
			out = append(out, RollbackResult{Host: hj.Host, Err: errors.New("not in the inventory (or excluded by --limit): not rolled back")})
			continue
		}
		todo = append(todo, hj)
	}
	var mu sync.Mutex
	wt := newWatcher(rollbackHosts(todo, byName), opt, rec)
	if wt != nil {
		wt.since = opt.Now().UTC().Truncate(time.Second)
	}
	notDone, gateErr := rollOut(ctx, todo, opt, wt, func(i int) bool {
		hj := todo[i]
		o := opt
		o.release = true
		agreed, refused, err := byManifest(ctx, byName[hj.Host], o, j.RunID, hj)
		var res restored
		if err == nil {
			res, err = rollbackHost(ctx, byName[hj.Host], o, j.RunID, agreed)
		}
		rec.update(hj.Host, func(x *remediate.HostJournal) { rolledBack(x, res, refused, err) })
		if err == nil && len(refused) == 0 && opt.Restart != nil {
			o.RunID = j.RunID // the restart script's lock names the run
			err = restartUndone(ctx, byName[hj.Host], o, rec, hj, res.undone)
		}
		mu.Lock()
		detail := res.String()
		if res.nothing {
			detail = "run " + j.RunID + " changed nothing here (no manifest of it on the host)"
		}
		out = append(out, RollbackResult{Host: hj.Host, Detail: detail, Kept: res.kept, Refused: refused, Nothing: res.nothing, Err: err})
		mu.Unlock()
		return err == nil && len(refused) == 0
	})
	out = append(out, notDone...)
	sort.Slice(out, func(a, b int) bool { return out[a].Host < out[b].Host })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.saveLocked()
	return out, errors.Join(gateErr, rec.err)
}

// rollOut runs fn over todo: opt.Batch at a time, every host started
// even when ctx ends (each one's restore then fails on its own and says
// so); or opt.Rollout's waves, gated, starting nothing once ctx ended or
// the gate refused: those hosts are returned as not rolled back, and the
// gate's refusal (also after the last host) as the error.
func rollOut(ctx context.Context, todo []remediate.HostJournal, opt Options, wt *watcher, fn func(i int) bool) ([]RollbackResult, error) {
	if opt.Rollout == nil {
		fanout.Run(context.WithoutCancel(ctx), len(todo), fanout.Options{Limit: max(opt.Batch, 1)}, fn)
		return nil, nil
	}
	hosts := make([]string, len(todo))
	for i, hj := range todo {
		hosts[i] = hj.Host
	}
	o := runWaves(ctx, hosts, opt.Rollout, 0, fn, wt)
	why := "interrupted"
	if o.gate != nil {
		why = o.gate.Error()
	}
	var out []RollbackResult
	for _, i := range o.NotStarted {
		out = append(out, RollbackResult{Host: hosts[i], Err: &GateError{Err: errors.New("not rolled back: " + why)}})
	}
	return out, o.gate
}

// rollbackHosts are the hosts of todo as the watcher knows them.
func rollbackHosts(todo []remediate.HostJournal, byName map[string]inventory.Host) []Host {
	out := make([]Host, len(todo))
	for i, hj := range todo {
		out[i] = Host{Inv: byName[hj.Host]}
	}
	return out
}

// restartUndone restarts h's broker after its rollback (rollback
// --restart) when what the restore changed back needs it
// (UndoneRestarts), as fix --apply --restart does after a verify
// (restartHost): gathered again, restarted through its systemd unit, the
// restored backlog checked in force, then watched. The error says why the
// broker was not restarted as it should have been.
func restartUndone(ctx context.Context, h inventory.Host, opt Options, rec *journal, hj remediate.HostJournal, undone []string) error {
	changes := UndoneRestarts(hj, undone)
	if len(changes) == 0 {
		return nil
	}
	after, err := regather(ctx, Host{Inv: h}, opt, nil)
	if err != nil {
		return located.Hint(fmt.Errorf("rolled back, but the broker, which needs a restart for it, was not restarted: the host could not be read again: %w", err), "restart it by hand once the cluster has 0 under-replicated partitions")
	}
	if restartHost(ctx, Host{Inv: h, Facts: after}, opt, rec, after, changes, true) {
		return nil
	}
	why := "the restart failed"
	rec.update(h.Name, func(x *remediate.HostJournal) {
		if x.Restart != nil && x.Restart.Error != "" {
			why = x.Restart.Error
		}
		x.Status = remediate.StatusFailed
		x.Error += "; the broker's restart after it: " + why
	})
	return fmt.Errorf("rolled back, but the broker's restart after it: %s", why)
}

// byManifest is the part of hj the run's own manifest on host h holds
// (HostJournal.Reconcile: the host is the authority on what the run
// changed there), and the items refused; a host without the run's
// manifest has nothing to restore (the restore script then says so). A
// manifest that cannot be read or trusted is an error: nothing restored.
func byManifest(ctx context.Context, h inventory.Host, opt Options, runID string, hj remediate.HostJournal) (remediate.HostJournal, []string, error) {
	m, err := hostManifest(ctx, h, runID, opt)
	switch {
	case err != nil:
		return hj, nil, fmt.Errorf("the run's manifest on the host, the authority on what to restore: %w", err)
	case m == nil:
		return remediate.HostJournal{Host: hj.Host}, nil, nil
	}
	agreed, refused := hj.Reconcile(*m)
	return agreed, refused, nil
}

// rolledBack journals the outcome of kaudit rollback for one host. A host
// the run never changed keeps "unchanged" unless the restore changed it.
// Items refused (byManifest) fail the host, each named.
func rolledBack(x *remediate.HostJournal, res restored, refused []string, err error) {
	switch {
	case err != nil:
		x.Status = remediate.StatusFailed
		x.Error = "rollback failed: " + err.Error()
	case len(refused) > 0:
		x.Status = remediate.StatusFailed
		x.Error = "rollback refused what the host's manifest does not hold (" + strings.Join(refused, "; ") + "); restored the rest (" + res.String() + ")"
	case res.nothing:
		notChanged(x)
		x.Error += "; rollback: the host has no manifest of the run: it changed nothing there"
	case x.Status != remediate.StatusUnchanged || res.changed():
		x.Status = remediate.StatusRolledBack
		x.Error = "rolled back by kaudit rollback (" + res.String() + ")"
	}
	if len(res.kept) > 0 && err == nil {
		x.Error += "; kept (changed since the run): " + strings.Join(res.kept, "; ")
	}
}

// applyWait is how long (seconds) a restore waits for a still running
// apply script of its run (RollbackParams.Wait): half of the per-host
// timeout, at most 30 s.
func applyWait(timeout time.Duration) int {
	return int(min(timeout/2, 30*time.Second) / time.Second)
}

// rollbackHost runs the restore script for one host and counts what it
// did.
//
// Only the items the run may have changed are sent (HostJournal.Owned);
// the script restores each only while it is as the run left it (unless
// Force), restores nothing when the host has no manifest of the run, and
// is refused while another run's lease is live (a *HeldError).
func rollbackHost(ctx context.Context, h inventory.Host, opt Options, runID string, hj remediate.HostJournal) (restored, error) {
	marker := NewMarker()
	backups, bi, runtime, _ := hj.Owned()
	for k := range backups {
		if backups[k].Existed && backups[k].Stored == "" {
			backups[k].Stored = RunDir(runID) + "/" + BackupName(bi[k])
		}
	}
	owned := remediate.HostJournal{Host: hj.Host, Backups: backups, Runtime: runtime}
	script, err := RollbackScript(RollbackParams{Marker: marker, RunID: runID, Backups: backups, Runtime: runtime, Wait: applyWait(opt.Timeout), Force: opt.Force,
		Lease: opt.lease(), Release: opt.release})
	if err != nil {
		return restored{}, err
	}
	out, err := runScript(ctx, opt, h, script, "the restore script")
	if err != nil {
		return restored{}, err
	}
	rs, err := remote.ParseSteps(out.Stdout, marker, h.Name, rollbackWords)
	if err != nil {
		return restored{}, err
	}
	if held := heldError(h.Name, rs.FirstFailure()); held != nil {
		held.Refused = RefusedRestore
		return restored{}, held
	}
	var counts restored
	var fails []string
	items := restoreItems(runID, owned)
	for _, r := range rs {
		switch {
		case r.Step == "manifest" && r.OK:
			counts.nothing = r.Word == wordAbsent
		case r.Step == "lease" || r.Step == "cleaned" || r.Step == "apply-running":
			if !r.OK {
				fails = append(fails, r.Step+": "+r.Text())
			}
		case r.Step == "done":
		case !r.OK:
			fails = append(fails, r.Step+": "+r.Text())
		default:
			counts.count(r, items[r.Step])
		}
	}
	if len(fails) > 0 {
		return counts, errors.New(strings.Join(fails, "; ") + stderrTail(out))
	}
	if d := rs.Find("done"); d == nil || d.Word != wordOK {
		return counts, errors.New("the restore script did not finish" + stderrTail(out))
	}
	return counts, nil
}

// restoreItem is what one restore step is about: its target (a file's
// path, a running value's key) and what a "kept" one is: which file or
// running value changed since the run, and how to overwrite it anyway.
type restoreItem struct {
	target string
	kept   func(current string) string
}

// restoreItems are the restore steps' items, by step.
func restoreItems(runID string, hj remediate.HostJournal) map[string]restoreItem {
	again := "kaudit rollback --run " + runID + " --force overwrites it"
	m := map[string]restoreItem{}
	for i, bk := range hj.Backups {
		m["restore-file-"+strconv.Itoa(i)] = restoreItem{target: bk.Path, kept: func(cur string) string {
			if cur == "gone" {
				return located.WithHint(fmt.Sprintf("%s was removed since run %s: left as it is", bk.Path, runID), again)
			}
			return located.WithHint(fmt.Sprintf("%s changed since run %s (sha256 %s, kaudit wrote %s): left as it is", bk.Path, runID, short(cur), short(bk.Written)), "merge by hand, or "+again)
		}}
	}
	for i, r := range hj.Runtime {
		m["restore-"+runtimeStep(r.Kind, i)] = restoreItem{target: r.Key, kept: func(cur string) string {
			return located.WithHint(fmt.Sprintf("%s is %s, not the %s run %s set: left as it is (was %s before the run)", r.Key, cur, r.After, runID, r.Before), again)
		}}
	}
	return m
}

// UndoneRestarts are the changes of hj that need a broker restart
// (Change.RestartRequired) and whose item a rollback changed back
// (undone: file paths and running values' keys): the broker runs with
// the run's values until it restarts.
func UndoneRestarts(hj remediate.HostJournal, undone []string) []remediate.Change {
	var out []remediate.Change
	for _, c := range hj.Changes {
		if !c.RestartRequired {
			continue
		}
		for _, u := range undone {
			// a running value (somaxconn) only when it was set back, a
			// file (server.properties, the drop-in) when it was
			if (c.Runtime && u == c.Target) || (!c.Runtime && c.Persist && u == c.PersistPath) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12] + "…"
	}
	return sha
}
