package probe

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
)

// Defaults for a probe.
const (
	DefaultBudget  = 3 * time.Second
	DefaultPayload = 384 << 10
	// KafkaDefaultRcvBuf is Kafka's socket.receive.buffer.bytes default.
	KafkaDefaultRcvBuf = 102400
)

// NeedsRoot is the reason given when the probe is skipped for lack of privileges.
const NeedsRoot = "needs root (become)"

// Options tune the probe. The zero value probes Kafka's default SO_RCVBUF,
// 65536 and the host's rmem_max with DefaultBudget and DefaultPayload.
type Options struct {
	Budget  time.Duration // on the host; the SSH session gets Budget + connect timeout + 2s
	Payload int
	RcvBufs []string // overrides the cases; see Params.RcvBufs
	Pythons []string // see Params.Pythons
}

// Cases returns the SO_RCVBUF cases for a broker whose
// socket.receive.buffer.bytes is rcvbuf ("" = unset, Kafka's default).
func Cases(rcvbuf string) []string {
	first := fmt.Sprint(KafkaDefaultRcvBuf)
	if rcvbuf != "" && rcvbuf != "-1" && rcvbuf != first {
		if n, err := strconv.Atoi(rcvbuf); err == nil && n > 0 && n <= 1<<30 {
			return []string{rcvbuf, first, "65536", "max"}
		}
	}
	return []string{first, "65536", "max"}
}

// Run probes one host whose kernel was gathered as k. It never returns an
// error: every outcome, a refusal or a transport failure included, is a
// facts.Probe with its state and reason. ctx bounds it (Ctrl-C).
func Run(ctx context.Context, r transport.Runner, t transport.Target, k facts.Kernel, rcvbuf string, opt Options) *facts.Probe {
	start := time.Now()
	res := run(ctx, r, t, k, rcvbuf, opt)
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

func run(ctx context.Context, r transport.Runner, t transport.Target, k facts.Kernel, rcvbuf string, opt Options) *facts.Probe {
	ok, why := SyncookiesPerNetns(k.Release)
	if !ok {
		return &facts.Probe{State: facts.ProbeNotPerNetns, Reason: why, Release: k.Release}
	}
	opt.Budget = cmp.Or(opt.Budget, DefaultBudget)
	opt.Payload = cmp.Or(opt.Payload, DefaultPayload)
	if len(opt.RcvBufs) == 0 {
		opt.RcvBufs = Cases(rcvbuf)
	}
	marker := remote.NewMarker(remote.SectionPrefix)
	script, err := Script(Params{Marker: marker, Release: k.Release, Budget: opt.Budget,
		Payload: opt.Payload, RcvBufs: opt.RcvBufs, Pythons: opt.Pythons})
	if err != nil {
		return &facts.Probe{State: facts.ProbeError, Reason: err.Error(), Release: k.Release}
	}
	ct := t.ConnectTimeout
	if ct <= 0 {
		ct = transport.DefaultConnectTimeout
	}
	limit := opt.Budget + ct + 2*time.Second
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := r.Run(cctx, t, script)
	if err != nil {
		f := failed(ctx, cctx, err, t.Become == "sudo", limit, len(script), k.Release)
		if out == nil || f.State == facts.ProbeNeedsRoot {
			return f
		}
		// The session failed after the probe printed: keep every pair it
		// measured (the rules judge them), never an ok.
		p := Parse(out.Stdout, marker)
		if len(p.Cases) == 0 {
			return f
		}
		p.PerNetns, p.ScriptBytes = why, len(script)
		if p.State == facts.ProbeOK {
			p.State = f.State
		}
		p.Reason = strings.TrimPrefix(p.Reason+"; ", "; ") + f.Reason
		p.Release = cmp.Or(p.Release, k.Release)
		return p
	}
	p := Parse(out.Stdout, marker)
	p.PerNetns, p.ScriptBytes = why, len(script)
	p.Release = cmp.Or(p.Release, k.Release) // the script stopped before printing it (needs root)
	if p.State == facts.ProbeNeedsRoot {
		p.Reason = located.WithHint(NeedsRoot+": "+p.Reason, "set become: sudo with passwordless sudo for /bin/sh, or log in as root")
	}
	return p
}

// failed turns a transport error into a probe outcome: an authentication
// failure under become: sudo (sudo -n refused) is "needs root", a deadline
// is a timeout, anything else an error.
func failed(parent, ctx context.Context, err error, become bool, limit time.Duration, sent int, release string) *facts.Probe {
	e := transport.AsError(err)
	p := &facts.Probe{State: facts.ProbeError, Release: release, ScriptBytes: sent, Reason: "probe session failed: " + e.Msg}
	switch {
	case e.Kind == facts.KindAuth && become:
		p.State, p.Reason = facts.ProbeNeedsRoot, NeedsRoot+": "+e.Msg
	case parent.Err() != nil:
		p.State, p.Reason = facts.ProbeTimeout, "probe interrupted (the probe stops itself within its budget on the host)"
	case ctx.Err() != nil:
		p.State, p.Reason = facts.ProbeTimeout, fmt.Sprintf("probe did not finish within %s; the host side kills itself within its budget", limit)
	}
	return p
}
