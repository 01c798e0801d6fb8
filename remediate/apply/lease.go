package apply

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
)

// One run per host at a time. Every script of a run that reads for a
// change, changes or restores holds the host lock (KaudirDir/lock,
// flock(1), or a lock directory naming its shell where there is no
// flock) for its whole execution, so two scripts never change a host at
// once, and the kernel releases it when the script dies. A run's steps
// on a host are several scripts (read, apply, the re-gather, a restore),
// so the run also holds a lease (KaudirDir/lease: the run, the operator,
// kaudit's pid and start time, when it started and when it expires),
// written by its read script and removed by its last step there
// (ReleaseScript): another run's read is refused while it is live
// (HeldError), and its apply refuses a lease that is no longer its own.
// A lease whose expiry passed (TTL: five times the per-host deadlines)
// is stale: the next run takes it over and says so. So is one whose
// kaudit ran on this machine, as this user, and is gone (killed): kaudit
// sees that locally and takes it over at once (Lease.Takeover).

// localOperator is user@hostname of this machine, in the lease's
// alphabet.
func localOperator() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 128 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return r
			}
			return '_'
		}, s)
	}
	op := clean(name) + "@" + clean(host)
	if len(op) > 128 {
		op = op[:128]
	}
	return op
}

// procStart is the start time of process pid on this machine (field 22
// of /proc/PID/stat), "" when there is no such process (or no /proc).
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// lease is this process's Lease for opt's run.
func (o *Options) lease() Lease {
	st := procStart(os.Getpid())
	if st == "" {
		st = "0"
	}
	return Lease{
		Operator: o.Operator, PID: os.Getpid(), PStart: st,
		TTL:      int((5*(o.Timeout+max(o.ConnectTimeout, 10*time.Second)) + 30*time.Second) / time.Second),
		LockWait: applyWait(o.Timeout),
	}
}

// HeldError is a host whose lease another run holds: nothing was
// changed there.
type HeldError struct {
	Host, RunID, Operator string
	Started, Expires      time.Time
	PID                   int
	PStart                string
	// Refused is what was refused ("" a read: nothing changed; Restore;
	// Restart).
	Refused Refusal
}

// Refusal is what a HeldError refused.
type Refusal int

// The steps another run's lease refuses besides a read.
const (
	RefusedRead Refusal = iota
	RefusedRestore
	RefusedRestart
)

var refusalText = [...]string{RefusedRead: "nothing changed here", RefusedRestore: "nothing restored here", RefusedRestart: "the broker not restarted"}

func (e *HeldError) Error() string {
	return located.WithHint(fmt.Sprintf("%s is being changed by run %s (%s, since %s): %s",
		e.Host, e.RunID, e.Operator, e.Started.UTC().Format("15:04:05 UTC"), refusalText[e.Refused]),
		"re-run when it is done (its lease expires at "+e.Expires.UTC().Format("15:04:05 UTC")+")")
}

// goneHere reports whether the holder's kaudit ran on this machine as
// this operator and is gone: its lease is stale although not expired.
func (e *HeldError) goneHere(operator string) bool {
	return e.Operator == operator && e.PID > 0 && procStart(e.PID) != e.PStart
}

// heldError reads a lease step's "held RUNID OPERATOR STARTED EXPIRES
// PID PSTART" failure; nil for any other result.
func heldError(host string, r *remote.Result) *HeldError {
	if r == nil || r.OK || r.Step != "lease" || len(r.Detail) != 7 || r.Detail[0] != "held" {
		return nil
	}
	d := r.Detail
	started, err1 := strconv.ParseInt(d[3], 10, 64)
	expires, err2 := strconv.ParseInt(d[4], 10, 64)
	pid, err3 := strconv.Atoi(d[5])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	return &HeldError{Host: host, RunID: d[1], Operator: d[2], Started: time.Unix(started, 0), Expires: time.Unix(expires, 0), PID: pid, PStart: d[6]}
}

// leaseText is a lease step's result made a sentence: the apply's "lost"
// lease, a "stale" one taken over.
func leaseText(r *remote.Result) string {
	d := r.Detail
	switch {
	case len(d) == 2 && d[0] == "lost":
		return "the run's lease on the host is gone (removed by hand?)"
	case len(d) == 5 && d[0] == "lost":
		return fmt.Sprintf("the run's lease on the host was taken over by run %s (%s, since %s)", d[1], d[2], unixText(d[3]))
	}
	return r.Text()
}

// unixText is seconds since the epoch as "15:04:05 UTC" ("?": not a
// number).
func unixText(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return "?"
	}
	return time.Unix(n, 0).UTC().Format("15:04:05 UTC")
}

// staleText says what a read step's "stale" line took over.
func staleText(host string, r remote.Result) string {
	d := r.Detail
	if len(d) == 4 {
		return fmt.Sprintf("%s: took over the stale lease of run %s (%s, since %s, expiring %s); that run may have left changes here: kaudit rollback --run %s undoes them",
			host, d[0], d[1], unixText(d[2]), unixText(d[3]), d[0])
	}
	return host + ": took over a malformed lease (torn by a crash)"
}

// release runs the release script of opt's run on h: the run's last step
// there. Its failure is only logged (the lease expires).
func release(ctx context.Context, opt Options, h inventory.Host, rec *journal) {
	marker := NewMarker()
	l := opt.lease()
	script, err := ReleaseScript(marker, opt.RunID, l)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opt.Timeout)
		defer cancel()
		var out []byte
		o, rerr := runScript(ctx, opt, h, script, "the release script")
		if o != nil {
			out = o.Stdout
		}
		rs := remote.ParseResults(out, marker)
		switch f := rs.FirstFailure(); {
		case f != nil:
			err = fmt.Errorf("%s: %s", f.Step, f.Text())
		case rerr != nil:
			err = rerr
		case rs.Find("done") == nil:
			err = fmt.Errorf("the release script did not finish%s", stderrTail(o))
		}
		for _, r := range rs {
			if r.Step == "cleaned" && r.OK {
				rec.logf("%s: removed %s (left by a script that is gone)", h.Name, r.Text())
			}
		}
	}
	if err != nil {
		rec.logf("%s: warning: cannot release the run's lease (%v); it expires within %ds", h.Name, err, l.TTL)
	}
}
