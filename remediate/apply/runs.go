package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// HostRun is one run a host holds (RunDir).
type HostRun struct {
	Host, RunID string
	// State: manifest (whole: the run may have changed the host; it can
	// be rolled back from it), partial (no end line: cannot be trusted),
	// none (the run stopped before its first change).
	State   remote.Word
	Running bool // its apply script holds the host lock now
}

// Describe is the run's state on the host as a listing says it.
func (r HostRun) Describe() string {
	st := map[remote.Word]string{wordManifest: "backups", wordPartial: "manifest cannot be trusted", wordNone: "changed nothing (no manifest)"}[r.State]
	if r.Running {
		st += ", apply script running"
	}
	return st
}

// HostRuns lists what each host holds of kaudit's runs: the runs'
// directories and the lease, sorted by run then host; hosts that could
// not be read are returned as errors.
func HostRuns(ctx context.Context, hosts []inventory.Host, opt Options) (runs []HostRun, leases []HostLease, errs []RollbackResult) {
	opt.defaults()
	var mu sync.Mutex
	done := fanout.Run(ctx, len(hosts), fanout.Options{Limit: max(opt.Batch, 1)}, func(i int) bool {
		r, l, err := hostRuns(ctx, hosts[i], opt)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, RollbackResult{Host: hosts[i].Name, Err: err})
			return false
		}
		runs = append(runs, r...)
		if l != nil {
			leases = append(leases, *l)
		}
		return true
	})
	errs = append(errs, notRead(ctx, hosts, done.NotStarted)...)
	sort.Slice(runs, func(a, b int) bool {
		if runs[a].RunID != runs[b].RunID {
			return runs[a].RunID < runs[b].RunID
		}
		return runs[a].Host < runs[b].Host
	})
	sort.Slice(leases, func(a, b int) bool { return leases[a].Host < leases[b].Host })
	sort.Slice(errs, func(a, b int) bool { return errs[a].Host < errs[b].Host })
	return runs, leases, errs
}

func hostRuns(ctx context.Context, h inventory.Host, opt Options) ([]HostRun, *HostLease, error) {
	marker := NewMarker()
	script, err := RunsScript(marker)
	if err != nil {
		return nil, nil, err
	}
	out, err := runScript(ctx, opt, h, script, "the runs script")
	if err != nil {
		return nil, nil, err
	}
	rs, err := remote.ParseSteps(out.Stdout, marker, h.Name, runsWords)
	if err != nil {
		return nil, nil, err
	}
	if rs.Find("done") == nil {
		return nil, nil, errors.New("listing the runs did not finish" + stderrTail(out))
	}
	applying := ""
	if r := rs.Find("applying"); r != nil && r.OK {
		applying = r.Text()
	}
	var runs []HostRun
	var lease *HostLease
	for _, r := range rs {
		switch {
		case !r.OK:
		case r.Step == "run" && len(r.Detail) == 1 && remediate.ValidRunID(r.Detail[0]):
			runs = append(runs, HostRun{Host: h.Name, RunID: r.Detail[0], State: r.Word, Running: r.Detail[0] == applying})
		case r.Step == "lease":
			lease = listedLease(h.Name, r)
		}
	}
	return runs, lease, nil
}

// listedLease is the runs script's "found LEASE NOW" (or malformed).
func listedLease(host string, r remote.Result) *HostLease {
	if r.Word == wordFound && len(r.Detail) == 7 {
		l, err := parseLease(host, r.Detail[:6])
		now, nerr := strconv.ParseInt(r.Detail[6], 10, 64)
		if err == nil && nerr == nil {
			l.Live = now < l.Expires.Unix()
			return &l
		}
	}
	return &HostLease{Host: host, Malformed: true}
}

// String is the lease as a person reads it.
func (l HostLease) String() string {
	if l.Malformed {
		return l.Host + ": a malformed lease (torn by a crash): the next run takes it over"
	}
	state := "live, expires " + l.Expires.UTC().Format("15:04:05 UTC")
	if !l.Live {
		state = "expired at " + l.Expires.UTC().Format("15:04:05 UTC") + ": stale, the next run takes it over"
	}
	return fmt.Sprintf("%s: being changed by run %s (%s, since %s; %s)", l.Host, l.RunID, l.Operator, l.Started.UTC().Format("15:04:05 UTC"), state)
}

// notRead are the hosts a fan-out left out because ctx ended: each one an
// error saying so, so that a host is never silently missing from a
// listing or a rebuilt journal.
func notRead(ctx context.Context, hosts []inventory.Host, idx []int) []RollbackResult {
	var out []RollbackResult
	for _, i := range idx {
		out = append(out, RollbackResult{Host: hosts[i].Name, Err: fmt.Errorf("not read: %w", context.Cause(ctx))})
	}
	return out
}
