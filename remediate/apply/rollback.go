package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// RollbackResult is one host's outcome of Rollback.
type RollbackResult struct {
	Host   string
	Detail string // per-item summary: "2 restored, 1 removed, 3 unchanged"
	Err    error
}

// Restore step outcomes: the detail of a restore-* result line.
const (
	restoredItem  = "restored"
	removedItem   = "removed"
	unchangedItem = "unchanged"
)

// restored counts a restore's items by outcome.
type restored struct {
	Restored, Removed, Unchanged int
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
	}{{c.Restored, restoredItem}, {c.Removed, removedItem}, {c.Unchanged, unchangedItem}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

// count adds one ok restore step's detail.
func (c *restored) count(detail string) {
	switch detail {
	case restoredItem:
		c.Restored++
	case removedItem:
		c.Removed++
	case unchangedItem:
		c.Unchanged++
	}
}

// Rollback restores every host of j that has backups or running values
// from the run's backups on the host (see RollbackScript), opt.Batch at a
// time, updates the journal's statuses and saves it at opt.JournalPath.
// Hosts of j missing from inv are reported as errors. It is idempotent.
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
		if _, ok := byName[hj.Host]; !ok {
			out = append(out, RollbackResult{Host: hj.Host, Err: errors.New("not in the inventory (or excluded by --limit): not rolled back")})
			continue
		}
		todo = append(todo, hj)
	}
	var mu sync.Mutex
	// Every host is started even when ctx ends: each one's restore then
	// fails on its own and says so.
	fanout.Run(context.WithoutCancel(ctx), len(todo), fanout.Options{Limit: max(opt.Batch, 1)}, func(i int) bool {
		hj := todo[i]
		res, err := rollbackHost(ctx, byName[hj.Host], opt, j.RunID, hj)
		rec.update(hj.Host, func(x *remediate.HostJournal) { rolledBack(x, res, err) })
		mu.Lock()
		out = append(out, RollbackResult{Host: hj.Host, Detail: res.String(), Err: err})
		mu.Unlock()
		return err == nil
	})
	sort.Slice(out, func(a, b int) bool { return out[a].Host < out[b].Host })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.saveLocked()
	return out, rec.err
}

// rolledBack journals the outcome of kaudit rollback for one host. A host
// the run never changed keeps "unchanged" unless the restore changed it.
func rolledBack(x *remediate.HostJournal, res restored, err error) {
	switch {
	case err != nil:
		x.Status = remediate.StatusFailed
		x.Error = "rollback failed: " + err.Error()
	case x.Status != remediate.StatusUnchanged || res.changed():
		x.Status = remediate.StatusRolledBack
		x.Error = "rolled back by kaudit rollback (" + res.String() + ")"
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
func rollbackHost(ctx context.Context, h inventory.Host, opt Options, runID string, hj remediate.HostJournal) (restored, error) {
	marker := NewMarker()
	script, err := RollbackScript(RollbackParams{Marker: marker, RunID: runID, Backups: hj.Backups, Runtime: hj.Runtime, Wait: applyWait(opt.Timeout)})
	if err != nil {
		return restored{}, err
	}
	out, err := runScript(ctx, opt, h, script, "the restore script")
	if err != nil {
		return restored{}, err
	}
	rs := remote.ParseResults(out.Stdout, marker)
	var counts restored
	var fails []string
	for _, r := range rs {
		switch {
		case r.Step == "done":
		case !r.OK:
			fails = append(fails, r.Step+": "+r.Text())
		default:
			counts.count(r.Text())
		}
	}
	if len(fails) > 0 {
		return counts, errors.New(strings.Join(fails, "; ") + stderrTail(out))
	}
	if d := rs.Find("done"); d == nil || d.Text() != "ok" {
		return counts, errors.New("the restore script did not finish" + stderrTail(out))
	}
	return counts, nil
}
