package apply

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

//go:embed sh/restart.sh
var restartSh string

// RestartParams is what the restart script (sh/restart.sh) does: with
// CountersOnly it only reads the TcpExt counters (the watch); else it
// restarts Unit and waits, at most Wait seconds, for the old process to
// be gone and the new MainPID to listen on Port.
type RestartParams struct {
	Marker       string
	Unit         string
	Port         int
	Wait         int // seconds (--restart-timeout)
	CountersOnly bool
	RunID        string
	Lease        Lease
}

// RestartScript renders the restart script; every value is validated
// and quoted.
func RestartScript(p RestartParams) ([]byte, error) {
	switch {
	case !remote.ValidMarker(p.Marker):
		return nil, fmt.Errorf("restart: bad marker %q", p.Marker)
	case !safe.ServiceName(p.Unit):
		return nil, fmt.Errorf("restart: %q is not a systemd service name", p.Unit)
	case p.Port < 1 || p.Port > 65535:
		return nil, fmt.Errorf("restart: bad port %d", p.Port)
	case p.Wait < 1 || p.Wait > 86400:
		return nil, fmt.Errorf("restart: bad wait %d s", p.Wait)
	}
	var h header
	h.set("M", p.Marker)
	mode := "restart"
	if p.CountersOnly {
		mode = "counters"
	}
	h.set("MODE", mode)
	h.set("UNIT", p.Unit)
	h.set("PORT", strconv.Itoa(p.Port))
	h.set("WAIT", strconv.Itoa(p.Wait))
	if !p.CountersOnly {
		h.lock(p.RunID, p.Lease)
	}
	return h.script(restartSh)
}

// RestartDecision says whether kaudit restarts host h's broker after its
// verified changes (changes), and when not, why: "" restart through
// unit; refused non-empty: the manual step instead. need is false when
// no change needs a restart.
func RestartDecision(f *facts.Facts, changes []remediate.Change) (need bool, unit, refused string) {
	need = remediate.NeedsRestart(changes)
	switch {
	case !need:
		return false, "", ""
	case f == nil || f.Kafka == nil || f.Kafka.PID == 0:
		return true, "", "no running broker was found: restart it by hand once it runs, so the changes take effect"
	case f.Kafka.Unit == nil || !safe.ServiceName(f.Kafka.Unit.Name) || !f.Kafka.Unit.SystemdRuns:
		return true, "", fmt.Sprintf("the broker (pid %d) is not a systemd service (a container, a shell): kaudit restarts only through systemd; restart it by hand where it is started, one broker at a time once the cluster is healthy (0 under-replicated partitions)", f.Kafka.PID)
	}
	return true, f.Kafka.Unit.Name, ""
}

// restartWants are what the restart must put in force, from the facts
// gathered after the verify: the backlog min(socket.listen.backlog.size,
// somaxconn) (0: unknown, not checked) and the open-files limit of a
// drop-in change ("SOFT HARD"; "": not changed).
func restartWants(after *facts.Facts, changes []remediate.Change) (backlog int, nofile string) {
	if after != nil && after.Kafka != nil {
		req, ok := rules.RequestedBacklog(after.Kafka)
		som, err := strconv.Atoi(strings.TrimSpace(after.Sysctl["net.core.somaxconn"]))
		if ok && err == nil {
			backlog = rules.EffectiveBacklog(req, som)
		}
	}
	for _, c := range changes {
		if c.Kind == remediate.KindUnitDropIn {
			soft, hard, ok := strings.Cut(c.To, ":")
			if !ok {
				hard = soft
			}
			nofile = soft + " " + hard
		}
	}
	return backlog, nofile
}

// parseCounters reads the counters step's detail: four numbers, "-"
// for one the kernel lacks (-1).
func parseCounters(r *remote.Result) (remediate.Counters, error) {
	if r == nil || !r.OK || len(r.Detail) != 1 {
		return remediate.Counters{}, fmt.Errorf("the counters were not read (%s)", r.Text())
	}
	f := strings.Fields(r.Detail[0])
	if len(f) != 4 {
		return remediate.Counters{}, fmt.Errorf("counters %q: want 4 fields", r.Detail[0])
	}
	v := make([]int64, 4)
	for i, s := range f {
		if s == "-" {
			v[i] = -1
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return remediate.Counters{}, fmt.Errorf("counter %q: want a number", s)
		}
		v[i] = n
	}
	return remediate.Counters{SyncookiesSent: v[0], TCPReqQFullDoCookies: v[1], ListenOverflows: v[2], ListenDrops: v[3]}, nil
}

// parseRestart fills r from the restart script's results; the error is
// the first step that failed, or what is missing.
func parseRestart(host string, rs remote.Results, r *remediate.Restart) error {
	if c, err := parseCounters(rs.Find("counters")); err == nil {
		r.Before = &c
	}
	num := func(step string) int {
		if x := rs.Find(step); x != nil && x.OK {
			n, _ := strconv.Atoi(x.Text())
			return n
		}
		return 0
	}
	r.OldPID, r.NewPID, r.Backlog = num("oldpid"), num("newpid"), num("listen")
	if x := rs.Find("nofile"); x != nil && x.OK && x.Text() != "-" {
		r.NoFile = normLimits(x.Text())
	}
	if f := rs.FirstFailure(); f != nil {
		if held := heldError(host, f); held != nil {
			held.Refused = RefusedRestart
			return held
		}
		return fmt.Errorf("restart step %s failed: %s", f.Step, f.Text())
	}
	if rs.Find("done") == nil || r.Before == nil || r.NewPID == 0 {
		return fmt.Errorf("the restart script did not finish")
	}
	return nil
}

// normLimits writes "unlimited" as systemd and the drop-in do: infinity.
func normLimits(s string) string {
	return strings.ReplaceAll(s, "unlimited", "infinity")
}

// RestartOptions are --restart's: how long a restart may take, how long
// the counters are watched after it, and the hosts refused a restart
// (host → why and what to do instead: a broker of a cluster whose health
// kaudit cannot read).
type RestartOptions struct {
	Timeout time.Duration // --restart-timeout
	Watch   time.Duration // --watch
	Refuse  map[string]string
}

// Defaults of --restart-timeout and --watch.
const (
	DefaultRestartTimeout = 10 * time.Minute
	DefaultWatch          = 5 * time.Minute
)

// restartHost restarts a verified host's broker when its changes need
// it (RestartDecision), checks the fix is in force and journals it. It
// reports whether the host ended as planned: a refused restart is said,
// not failed; a failed restart or a fix not in force fails the host.
// undone: the changes were rolled back (rollback --restart): the backlog
// read after the rollback must be in force, the open-files limit is the
// unit's own again (not checked).
func restartHost(ctx context.Context, h Host, opt Options, rec *journal, after *facts.Facts, changes []remediate.Change, undone bool) bool {
	name := h.Inv.Name
	need, unit, refused := RestartDecision(after, changes)
	if why := opt.Restart.Refuse[name]; need && why != "" {
		unit, refused = "", why
	}
	switch {
	case !need:
		return true
	case refused != "":
		rec.update(name, func(hj *remediate.HostJournal) { hj.Restart = &remediate.Restart{Refused: refused} })
		rec.logf("%s: broker restart required, NOT restarted: %s", name, refused)
		return true
	}
	r := &remediate.Restart{Unit: unit, At: opt.Now().UTC().Truncate(time.Second)}
	if undone {
		r.WantBacklog, _ = restartWants(after, nil)
	} else {
		r.WantBacklog, r.WantNoFile = restartWants(after, changes)
	}
	rec.logf("%s: restarting the broker (systemctl restart %s; waiting at most %s)", name, unit, opt.restartTimeout())
	err := runRestart(ctx, h, opt, r)
	if err == nil {
		r.CheckInForce()
	} else {
		r.Error = err.Error()
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Restart = r })
	if r.Error != "" {
		rec.logf("%s: restart of %s: %s", name, unit, r.Error)
		return false
	}
	rec.logf("%s: restarted %s: pid %d → %d, listener backlog %d (in force), open files %s; counters before: %s", name, unit, r.OldPID, r.NewPID, r.Backlog, cmp.Or(r.NoFile, "-"), r.Before)
	return true
}

func (o Options) restartTimeout() time.Duration {
	if o.Restart == nil || o.Restart.Timeout <= 0 {
		return DefaultRestartTimeout
	}
	return o.Restart.Timeout
}

// runRestart runs the restart script on h, under the restart's own
// deadline (opt.Timeout on top of --restart-timeout).
func runRestart(ctx context.Context, h Host, opt Options, r *remediate.Restart) error {
	wait := opt.restartTimeout()
	marker := NewMarker()
	script, err := RestartScript(RestartParams{Marker: marker, Unit: r.Unit, Port: kafkaPort(h), Wait: max(int(wait.Seconds()), 1), RunID: opt.RunID, Lease: opt.lease()})
	if err != nil {
		return err
	}
	o := opt
	o.Timeout = wait + opt.Timeout
	out, runErr := runScript(ctx, o, h.Inv, script, "the restart script")
	var rs remote.Results
	if out != nil {
		if rs, err = remote.ParseSteps(out.Stdout, marker, h.Inv.Name, restartWords); err != nil {
			return err
		}
	}
	if err := parseRestart(h.Inv.Name, rs, r); err != nil {
		if runErr != nil {
			return fmt.Errorf("%w: %v", err, runErr)
		}
		return fmt.Errorf("%w%s", err, stderrTail(out))
	}
	return nil
}

// kafkaPort is the port the gather looked for the broker on.
func kafkaPort(h Host) int {
	if h.Facts != nil && h.Facts.KafkaPort > 0 {
		return h.Facts.KafkaPort
	}
	return 9092
}

// watcher watches the counters of the brokers a wave restarted.
type watcher struct {
	hosts map[string]Host
	opt   Options
	rec   *journal
	// since: a restart asked before it is not this rollout's to watch
	// (a rollback's: the fix run's restarts; zero: every one, so a
	// resumed run still watches the restart its stop interrupted).
	since time.Time
}

func newWatcher(todo []Host, opt Options, rec *journal) *watcher {
	if opt.Restart == nil {
		return nil
	}
	w := &watcher{hosts: map[string]Host{}, opt: opt, rec: rec}
	for _, h := range todo {
		w.hosts[h.Inv.Name] = h
	}
	return w
}

// restarted is host's restart when kaudit restarted it and it is in
// force (nil otherwise).
func (w *watcher) restarted(host string) *remediate.Restart {
	var r *remediate.Restart
	w.rec.update(host, func(hj *remediate.HostJournal) {
		if hj.Restart != nil && hj.Restart.Refused == "" && hj.Restart.Before != nil && hj.Restart.After == nil && !hj.Restart.At.Before(w.since) {
			c := *hj.Restart
			r = &c
		}
	})
	return r
}

func (w *watcher) pending(done []string) bool {
	return slices.ContainsFunc(done, func(h string) bool { return w.restarted(h) != nil })
}

// watch waits until --watch has passed since each restart of done, reads
// the counters again and journals their deltas; cookies sent on a kernel
// that may have the bug (or counters that cannot be read) stop the
// rollout. Ctrl-C during the wait starts nothing new.
func (w *watcher) watch(ctx context.Context, done []string) error {
	var critical []string
	for _, name := range done {
		r := w.restarted(name)
		if r == nil {
			continue
		}
		if left := r.At.Add(w.opt.Restart.Watch).Sub(w.opt.Now()); left > 0 {
			w.rec.logf("%s: watching the SYN-cookie counters for %s more (--watch %s)", name, left.Round(time.Second), w.opt.Restart.Watch)
			if err := fanout.Sleep(ctx, left); err != nil {
				return fmt.Errorf("interrupted while watching %s after its restart: nothing further started", name)
			}
		}
		h := w.hosts[name]
		after, err := readCounters(ctx, h, w.opt, r.Unit)
		if err != nil {
			w.rec.update(name, func(hj *remediate.HostJournal) { hj.Restart.Error = "watch: " + err.Error() })
			return fmt.Errorf("%s: the counters could not be read after the restart's watch (%v): the storm cannot be ruled out; check nstat -az TcpExtSyncookiesSent there, then resume", name, err)
		}
		d := r.Before.Delta(after)
		kernelOpen := true
		w.rec.update(name, func(hj *remediate.HostJournal) {
			if hj.Residual != nil {
				kernelOpen = hj.Residual.Kernel == rules.Fail || hj.Residual.Kernel == rules.Unknown
			}
			hj.Restart.After, hj.Restart.Deltas = &after, &d
			hj.Restart.Critical = remediate.WatchVerdict(name, d, kernelOpen)
			if c := hj.Restart.Critical; c != "" {
				critical = append(critical, c)
			}
		})
		w.rec.logf("%s: watch after the restart: %s", name, d)
	}
	if len(critical) > 0 {
		return fmt.Errorf("CRITICAL: %s", strings.Join(critical, "; "))
	}
	return nil
}

// readCounters reads a host's TcpExt counters (the restart script's
// counters mode).
func readCounters(ctx context.Context, h Host, opt Options, unit string) (remediate.Counters, error) {
	marker := NewMarker()
	script, err := RestartScript(RestartParams{Marker: marker, Unit: unit, Port: kafkaPort(h), Wait: 1, CountersOnly: true})
	if err != nil {
		return remediate.Counters{}, err
	}
	out, err := runScript(context.WithoutCancel(ctx), opt, h.Inv, script, "the counters read")
	if err != nil {
		return remediate.Counters{}, err
	}
	return parseCounters(remote.ParseResults(out.Stdout, marker).Find("counters"))
}
