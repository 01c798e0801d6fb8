package apply

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
)

// One run per host at a time. Every script of a run that reads for a
// change, changes or restores holds the host lock (KaudirDir/lock,
// flock(1), or a lock directory where there is no flock; its holder
// record names the script) for its whole execution, so two scripts never
// change a host at once, and the kernel releases it when the script dies;
// a restore waits on it for its run's own apply script. A run's steps
// on a host are several scripts (read, apply, the re-gather, a restore),
// so the run also holds a lease, the one record of which run holds the
// host and until when (KaudirDir/lease: the run, the operator,
// kaudit's pid and start time, when it started and when it expires),
// written by its read script and removed by its last step there
// (ReleaseScript); every script takes both through hold (sh/lib.sh).
// Another run's read is refused while it is live
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
	st := cmp.Or(procStart(os.Getpid()), "0")
	return Lease{
		Operator: o.Operator, PID: os.Getpid(), PStart: st,
		TTL:      int((5*(o.Timeout+max(o.ConnectTimeout, 10*time.Second)) + 30*time.Second) / time.Second),
		LockWait: applyWait(o.Timeout),
	}
}

// HostLease is the lease a host has: the one record of which run holds
// the host and until when (KaudirDir/lease). Every step that reports it
// prints its six fields as the file holds them (LEASE in sh/lib.sh), and
// parseLease is their one reading.
type HostLease struct {
	Host, RunID, Operator string
	PID                   int    // the holder's kaudit, on its machine
	PStart                string // its start time there
	Started, Expires      time.Time
	Live                  bool // not expired by the host's clock (HostRuns)
	Malformed             bool
}

// parseLease reads a lease's fields: RUNID OPERATOR KPID KPSTART STARTED
// EXPIRES.
func parseLease(host string, d []string) (HostLease, error) {
	if len(d) != 6 || !remediate.ValidRunID(d[0]) || !reOperator.MatchString(d[1]) || !reDigits.MatchString(d[3]) {
		return HostLease{}, fmt.Errorf("%s: malformed lease %q", host, strings.Join(d, " "))
	}
	pid, err1 := strconv.Atoi(d[2])
	started, err2 := strconv.ParseInt(d[4], 10, 64)
	expires, err3 := strconv.ParseInt(d[5], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return HostLease{}, fmt.Errorf("%s: malformed lease %q", host, strings.Join(d, " "))
	}
	return HostLease{Host: host, RunID: d[0], Operator: d[1], PID: pid, PStart: d[3], Started: time.Unix(started, 0), Expires: time.Unix(expires, 0)}, nil
}

// HeldError is a host whose lease another run holds: nothing was
// changed there.
type HeldError struct {
	HostLease
	// Refused is what was refused (a read: nothing changed; a restore; a
	// restart).
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

// heldError reads a lease step's "held LEASE" failure; nil for any other
// result.
func heldError(host string, r *remote.Result) *HeldError {
	if r == nil || r.OK || r.Step != "lease" || r.Word != wordHeld {
		return nil
	}
	l, err := parseLease(host, r.Detail)
	if err != nil {
		return nil
	}
	return &HeldError{HostLease: l}
}

// leaseText is the apply's "lost [LEASE]" lease made a sentence.
func leaseText(host string, r *remote.Result) string {
	if r.Word != wordLost {
		return r.Text()
	}
	if len(r.Detail) == 0 {
		return "the run's lease on the host is gone (removed by hand?)"
	}
	l, err := parseLease(host, r.Detail)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("the run's lease on the host was taken over by run %s (%s, since %s)", l.RunID, l.Operator, l.Started.UTC().Format("15:04:05 UTC"))
}

// staleText says what a read step's stale line took over.
func staleText(host string, r remote.Result) string {
	l, err := parseLease(host, r.Detail)
	if r.Word == wordMalformed || err != nil {
		return host + ": took over a malformed lease (torn by a crash)"
	}
	return fmt.Sprintf("%s: took over the stale lease of run %s (%s, since %s, expiring %s); that run may have left changes here: kaudit rollback --run %s undoes them",
		host, l.RunID, l.Operator, l.Started.UTC().Format("15:04:05 UTC"), l.Expires.UTC().Format("15:04:05 UTC"), l.RunID)
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
		rs, perr := remote.ParseSteps(out, marker, h.Name, releaseWords)
		switch f := rs.FirstFailure(); {
		case perr != nil:
			err = perr
		case f != nil:
			err = fmt.Errorf("%s: %s", f.Step, f.Text())
		case rerr != nil:
			err = rerr
		case rs.Find("done") == nil:
			err = fmt.Errorf("the release script did not finish%s", stderrTail(o))
		}
	}
	if err != nil {
		rec.logf("%s: warning: cannot release the run's lease (%v); it expires within %ds", h.Name, err, l.TTL)
	}
}
