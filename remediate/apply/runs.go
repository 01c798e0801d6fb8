package apply

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// HostRun is one run a host holds (RunDir).
type HostRun struct {
	Host, RunID string
	// State: "manifest" (whole: the run may have changed the host; it
	// can be rolled back from it), "partial" (no end line: cannot be
	// trusted), "none" (the run stopped before its first change).
	State   string
	Running bool // its apply script still runs on the host
}

// HostLease is the lease a host has: the run changing it.
type HostLease struct {
	Host, RunID, Operator string
	Started, Expires      time.Time
	Live                  bool // not expired by the host's clock
	Malformed             bool
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
	rs := remote.ParseResults(out.Stdout, marker)
	if rs.Find("done") == nil {
		return nil, nil, errors.New("listing the runs did not finish" + stderrTail(out))
	}
	var runs []HostRun
	var lease *HostLease
	for _, r := range rs {
		d := r.Detail
		switch {
		case !r.OK:
		case r.Step == "run" && len(d) == 3 && remediate.ValidRunID(d[0]):
			runs = append(runs, HostRun{Host: h.Name, RunID: d[0], State: d[1], Running: d[2] == "running"})
		case r.Step == "lease" && len(d) == 1:
			lease = &HostLease{Host: h.Name, Malformed: true}
		case r.Step == "lease" && len(d) == 5:
			s, e1 := strconv.ParseInt(d[2], 10, 64)
			e, e2 := strconv.ParseInt(d[3], 10, 64)
			now, e3 := strconv.ParseInt(d[4], 10, 64)
			if e1 != nil || e2 != nil || e3 != nil || !remediate.ValidRunID(d[0]) {
				lease = &HostLease{Host: h.Name, Malformed: true}
				continue
			}
			lease = &HostLease{Host: h.Name, RunID: d[0], Operator: d[1], Started: time.Unix(s, 0), Expires: time.Unix(e, 0), Live: now < e}
		}
	}
	return runs, lease, nil
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
