// Package apply carries out remediation plans on hosts over the same
// transport as the audit, and rolls them back.
//
// Per host, in order (remediate/doc.go says what a plan may contain):
//
//  1. read: one script run reads the files the plan changes (the managed
//     sysctl file, server.properties: their SHA-256, mode and content, kept
//     in memory only: server.properties can hold secrets, so its content is
//     never logged, printed or journalled) and the running sysctl values;
//  2. the new file contents are computed locally (sysctld.Render,
//     props.Set), the backups and old values go into the local journal,
//     which is saved before anything changes;
//  3. apply: one script run creates /var/lib/kaudit/runs/<run id>/,
//     checks that nothing changed since the read, backs up every file
//     (a copy keeping mode, owner, times and xattrs — the SELinux context
//     among them —, SHA-256 checked) and running value, then sets the
//     running values through /proc/sys and replaces the files atomically
//     (temporary file in the same directory made as such a copy, SHA-256
//     checked, mv), journalling the hash each file has after writing;
//  4. verify: the host is gathered again (audit.Scan) and every change
//     must read back (running value, boot-time value through
//     facts.Persisted, property in the file);
//  5. any failure after the first change restores the host from the
//     backups (files byte for byte, running values) and stops further
//     batches once more than MaxFailures hosts failed.
//
// One run per host at a time: every script of a run holds the host lock
// for its whole execution and the run holds the host's lease from its
// read step to its last step there (lease.go); another run is refused on
// that host, naming the holder. The journal records, per item, whether
// the run changed it (remediate.Changed): a rollback touches only those
// items, and nothing on a host that has no manifest of the run.
//
// Only the changes of the plan are made: what a host does not allow was
// left out by the planner (remediate.HostPlan.Infeasible), so it cannot
// fail the host. When ctx ends (Ctrl-C) no further host starts and the
// hosts in flight finish (applyHost). Rollback restores only what still
// is as the run left it (RollbackScript; Options.Force overrides).
//
// Every value that reaches a script is validated (remediate's validators,
// and the stricter checks in this package) and single-quoted with
// remote.Quote; file contents travel base64-encoded in a here-document
// with a random delimiter.
//
// NIC changes: ring sizes (ethtool -G) and offloads (ethtool -K) are set
// at runtime and persisted through the host's own mechanism when the
// gather detected one (NetworkManager connection, ifupdown post-up
// lines, a systemd .link file; see package nicpersist), else in
// remediate.NICPersistPath, a udev rule file kaudit owns; they are read back
// with ethtool -g / -k in the script and verified from the re-gathered facts. Changing ring sizes resets the NIC
// on many drivers (a brief link drop): the plan says so.
package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

// ManagedFileMode is the mode of a newly created managed sysctl file.
const ManagedFileMode = "0644"

// Host is one host to change: where it is, what was gathered, its plan.
type Host struct {
	Inv      inventory.Host
	Facts    *facts.Facts
	Findings []rules.Finding
	Plan     remediate.HostPlan
}

// Options tune Apply and Rollback.
type Options struct {
	Runner         transport.Runner // nil: transport.NewSSH()
	RunID          string           // remediate.NewRunID when empty (Apply only)
	Timeout        time.Duration    // per script run and per re-gather; audit.DefaultTimeout when 0
	ConnectTimeout time.Duration
	// Batch is the number of hosts changed at once after the canary: the
	// first host with changes always goes alone. < 1 means 1.
	Batch int
	// MaxFailures: further batches are not started once more hosts than
	// this have failed (0: stop after the first failed host).
	MaxFailures int
	// JournalPath is where the journal is saved after every state change
	// ("" : not saved).
	JournalPath string
	// SysctlKeys are the keys the re-gather reads (rules.SysctlKeys()
	// when nil); the planned keys are always added.
	SysctlKeys []string
	// Files are the catalog's plain files the re-gather reads too
	// (rules.Files() when nil), so the rules judged on its facts see what
	// the scan's saw.
	Files []string
	// Force (Rollback only): restore files and running values even when
	// they changed since the run.
	Force bool
	// Operator names who runs kaudit in the hosts' leases: user@hostname
	// of this machine when empty.
	Operator string
	release  bool // Rollback: the run's lease is removed at the end
	// Log receives one line per host event (nil: discarded). Called from
	// several goroutines, serialized by Apply.
	Log func(line string)
	// Now is the clock the journal's times and a missing RunID are read
	// from (nil: time.Now).
	Now func() time.Time
	// Probes gives the verify's re-gather the probe verdict kaudit keeps
	// for the host's boot, so the residual risk (remediate.Residual) is
	// judged as the probe proved it (nil: by the release alone).
	Probes *probe.Records
	// Rollout, when set, orders and gates the hosts instead of the
	// canary and batches (rollout.go).
	Rollout *Rollout
	// Resume (Apply only) is the journal of the run to continue: its run
	// id, and its hosts that are done (remediate.HostJournal.Done) kept
	// as they are and not changed again.
	Resume *remediate.Journal
	// Restart (fix --apply --restart): a host whose verified changes
	// need a broker restart is restarted through its systemd unit and
	// watched (restart.go); nil: never restarted.
	Restart *RestartOptions
}

func (o *Options) defaults() {
	if o.Runner == nil {
		o.Runner = transport.NewSSH()
	}
	if o.Timeout <= 0 {
		o.Timeout = audit.DefaultTimeout
	}
	o.Batch = max(o.Batch, 1)
	if o.SysctlKeys == nil {
		o.SysctlKeys = rules.SysctlKeys()
	}
	if o.Files == nil {
		o.Files = rules.Files()
	}
	if o.Operator == "" {
		o.Operator = localOperator()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Skipped is a planned change this build does not apply, and why.
type Skipped struct {
	Change remediate.Change
	Reason string
}

// Split returns the changes of a plan that Apply carries out and those it
// skips: unknown kinds, and — a second guard behind the planner —
// net.ipv4.tcp_syncookies=0 unless rules.SyncookiesOffWarranted.
func Split(p remediate.HostPlan, findings []rules.Finding) (apply []remediate.Change, skipped []Skipped) {
	affected, _ := rules.SyncookiesOffWarranted(findings)
	for _, c := range p.Changes {
		switch {
		case c.Kind == remediate.KindSysctl && c.Target == rules.KeySyncookies && c.To == "0" && !affected:
			skipped = append(skipped, Skipped{c, "not disabling SYN cookies: kernel-synack-wscale does not fail, and on a fixed kernel cookies are the better defence"})
		case c.Kind == remediate.KindSysctl || c.Kind == remediate.KindKafkaProperty || c.Kind.IsNIC() || c.Kind == remediate.KindUnitDropIn:
			apply = append(apply, c)
		default:
			skipped = append(skipped, Skipped{c, "unknown change kind " + string(c.Kind)})
		}
	}
	return apply, skipped
}

// journal serializes updates and saves.
type journal struct {
	mu   sync.Mutex
	j    *remediate.Journal
	path string
	log  func(string)
	err  error // first save error
	now  func() time.Time
}

// newJournal starts the journal of run id: every host with its
// applicable changes, "planned" when it has some (those are returned in
// todo), else "unchanged". Its log serializes opt.Log.
func newJournal(hosts []Host, opt Options) (rec *journal, todo []Host) {
	j := &remediate.Journal{Version: remediate.JournalVersion, RunID: opt.RunID, StartedAt: opt.Now().UTC().Truncate(time.Second)}
	done := map[string]bool{}
	if r := opt.Resume; r != nil {
		j.StartedAt, j.Resumed = r.StartedAt, append(r.Resumed, opt.Now().UTC().Truncate(time.Second))
		for _, hj := range r.Hosts {
			if hj.Done() {
				done[hj.Host] = true
				j.Hosts = append(j.Hosts, hj)
			}
		}
	}
	for _, h := range hosts {
		if done[h.Inv.Name] {
			continue // changed by the run before it stopped: not again
		}
		changes, _ := Split(h.Plan, h.Findings)
		hj := remediate.HostJournal{Host: h.Inv.Name, Status: remediate.StatusUnchanged, Changes: changes}
		if hj.Changes == nil {
			hj.Changes = []remediate.Change{}
		}
		if len(changes) > 0 {
			hj.Status = remediate.StatusPlanned
			todo = append(todo, h)
		}
		j.Hosts = append(j.Hosts, hj)
	}
	rec = &journal{j: j, path: opt.JournalPath, now: opt.Now}
	if opt.Log != nil {
		var logMu sync.Mutex
		rec.log = func(s string) { logMu.Lock(); opt.Log(s); logMu.Unlock() }
	}
	return rec, todo
}

func (r *journal) update(host string, fn func(*remediate.HostJournal)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if hj := r.j.Host(host); hj != nil {
		fn(hj)
	}
	r.saveLocked()
}

func (r *journal) saveLocked() {
	if r.path == "" {
		return
	}
	if err := r.j.Save(r.path); err != nil && r.err == nil {
		r.err = err
		r.logf("warning: cannot save the journal: %v", err)
	}
}

func (r *journal) logf(format string, args ...any) {
	if r.log != nil {
		r.log(fmt.Sprintf(format, args...))
	}
}

// finish stamps the end of the run, saves, and returns the first save
// error.
func (r *journal) finish() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.j.FinishedAt = r.now().UTC().Truncate(time.Second)
	r.saveLocked()
	return r.err
}

// Apply carries out the plans (see the package doc) and returns the
// journal, also saved at opt.JournalPath after every state change. Hosts
// without applicable changes are journalled "unchanged". The first host
// with changes goes alone (the canary), then opt.Batch at a time; no
// batch starts once more than opt.MaxFailures hosts failed. The error is
// non-nil only when the run could not start (bad options, the journal
// cannot be saved); per-host failures are in the journal.
func Apply(ctx context.Context, hosts []Host, opt Options) (*remediate.Journal, error) {
	opt.defaults()
	if opt.Resume != nil {
		opt.RunID = opt.Resume.RunID
	}
	if opt.RunID == "" {
		opt.RunID = remediate.NewRunID(opt.Now())
	}
	if !remediate.ValidRunID(opt.RunID) {
		return nil, fmt.Errorf("apply: invalid run id %q", opt.RunID)
	}
	rec, todo := newJournal(hosts, opt)
	if opt.JournalPath != "" {
		if err := rec.j.Save(opt.JournalPath); err != nil {
			return nil, err // before any change: refuse to run without a journal
		}
	}
	// ctx ending (Ctrl-C) starts no further host; a host in flight
	// finishes the step it is in under its own deadlines, then is verified
	// or restored (applyHost), never left half-applied.
	out := fanOut(ctx, todo, opt, rec, func(i int) bool { return applyHost(ctx, todo[i], opt, rec) })
	if out.gate != nil {
		stopped(rec, todo, out)
	}
	if out.Stopped {
		for _, i := range out.NotStarted {
			name := todo[i].Inv.Name
			rec.update(name, func(hj *remediate.HostJournal) {
				hj.Status = remediate.StatusUnchanged
				hj.Error = fmt.Sprintf("not started: %d host(s) failed, more than --max-failures %d", out.Failed, opt.MaxFailures)
			})
			rec.logf("%s: not started (%d failed host(s), --max-failures %d)", name, out.Failed, opt.MaxFailures)
		}
	}
	if ctx.Err() != nil {
		for _, h := range todo {
			rec.update(h.Inv.Name, func(hj *remediate.HostJournal) {
				if hj.Status == remediate.StatusPlanned && len(hj.Backups) == 0 && len(hj.Runtime) == 0 {
					hj.Status = remediate.StatusUnchanged
					hj.Error = "not started: interrupted"
				}
			})
		}
	}
	if out.gate != nil {
		return rec.j, errors.Join(out.gate, rec.finish())
	}
	return rec.j, rec.finish()
}

// fanOut runs fn over todo: canary then batches, or opt.Rollout's waves.
func fanOut(ctx context.Context, todo []Host, opt Options, rec *journal, fn func(i int) bool) waveOutcome {
	stopAfter := opt.MaxFailures + 1
	if opt.Rollout == nil {
		return waveOutcome{Outcome: fanout.Run(ctx, len(todo), fanout.Options{Canary: true, Batch: opt.Batch, StopAfter: stopAfter}, fn)}
	}
	hosts := make([]string, len(todo))
	for i, h := range todo {
		hosts[i] = h.Inv.Name
	}
	return runWaves(ctx, hosts, opt.Rollout, stopAfter, fn, newWatcher(todo, opt, rec))
}

// stopped journals where the gate stopped the run: the hosts not started
// stay planned (a resume changes them), the journal says why.
func stopped(rec *journal, todo []Host, out waveOutcome) {
	st := &remediate.Stop{At: rec.now().UTC().Truncate(time.Second), Reason: out.gate.Error(), Next: []string{}}
	for _, i := range out.NotStarted {
		st.Next = append(st.Next, todo[i].Inv.Name)
	}
	rec.mu.Lock()
	rec.j.Stopped = st
	rec.saveLocked()
	rec.mu.Unlock()
	if len(st.Next) == 0 {
		rec.logf("stopped after the last host: %s", st.Reason)
		return
	}
	rec.logf("stopped before %d host(s): %s", len(st.Next), st.Reason)
}
