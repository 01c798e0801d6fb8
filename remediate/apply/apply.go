// Package apply carries out remediation plans on hosts over the same
// transport as the audit, and rolls them back.
//
// Per host, in order (DESIGN.md "Remediation"):
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
//     (cp -p, SHA-256 checked) and running value, then sets the running
//     values through /proc/sys and replaces the files atomically
//     (temporary file in the same directory, SHA-256 checked, mv);
//  4. verify: the host is gathered again (audit.Scan) and every change
//     must read back (running value, boot-time value through
//     facts.Persisted, property in the file);
//  5. any failure after the first change restores the host from the
//     backups (files byte for byte, running values) and stops further
//     batches once more than MaxFailures hosts failed.
//
// Every value that reaches a script is validated (remediate's validators,
// and the stricter checks in this package) and single-quoted with
// gather.Quote; file contents travel base64-encoded in a here-document
// with a random delimiter.
//
// NIC changes: ring sizes (ethtool -G) and offloads (ethtool -K) are set
// at runtime and persisted through the host's own mechanism when the
// gather detected one (NetworkManager connection, ifcfg ETHTOOL_OPTS,
// ifupdown post-up lines, a systemd .link file; see nicpersist.go), else in
// remediate.NICPersistPath, a udev rule file kaudit owns; they are read back
// with ethtool -g / -k in the script and verified from the re-gathered facts. Changing ring sizes resets the NIC
// on many drivers (a brief link drop): the plan says so.
package apply

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/props"
	"github.com/kaudit/kaudit/remediate/sysctld"
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
	// Log receives one line per host event (nil: discarded). Called from
	// several goroutines, serialized by Apply.
	Log func(line string)
}

func (o *Options) defaults() {
	if o.Runner == nil {
		o.Runner = transport.NewSSH()
	}
	if o.Timeout <= 0 {
		o.Timeout = audit.DefaultTimeout
	}
	if o.Batch < 1 {
		o.Batch = 1
	}
	if o.SysctlKeys == nil {
		o.SysctlKeys = rules.SysctlKeys()
	}
}

// Skipped is a planned change this build does not apply, and why.
type Skipped struct {
	Change remediate.Change
	Reason string
}

// Split returns the changes of a plan that Apply carries out and those it
// skips: unknown kinds, and — a second guard behind
// the planner — net.ipv4.tcp_syncookies=0 unless kernel-synack-wscale
// fails or is unknown in findings.
func Split(p remediate.HostPlan, findings []rules.Finding) (apply []remediate.Change, skipped []Skipped) {
	affected := false
	for _, f := range findings {
		if f.Rule == rules.RuleKernelSynackWscale && (f.Status == rules.Fail || f.Status == rules.Unknown) {
			affected = true
		}
	}
	for _, c := range p.Changes {
		switch {
		case c.Kind == remediate.KindSysctl && c.Target == rules.KeySyncookies && c.To == "0" && !affected:
			skipped = append(skipped, Skipped{c, "not disabling SYN cookies: kernel-synack-wscale does not fail, and on a fixed kernel cookies are the better defence"})
		case c.Kind == remediate.KindSysctl || c.Kind == remediate.KindKafkaProperty || isNIC(c.Kind):
			apply = append(apply, c)
		default:
			skipped = append(skipped, Skipped{c, "unknown change kind " + c.Kind})
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

// Apply carries out the plans (see the package doc) and returns the
// journal, also saved at opt.JournalPath after every state change. Hosts
// without applicable changes are journalled "unchanged". The error is
// non-nil only when the run could not start (bad options, the journal
// cannot be saved); per-host failures are in the journal.
func Apply(ctx context.Context, hosts []Host, opt Options) (*remediate.Journal, error) {
	opt.defaults()
	if opt.RunID == "" {
		opt.RunID = remediate.NewRunID(time.Now())
	}
	if !remediate.ValidRunID(opt.RunID) {
		return nil, fmt.Errorf("apply: invalid run id %q", opt.RunID)
	}
	j := &remediate.Journal{Version: remediate.JournalVersion, RunID: opt.RunID, StartedAt: time.Now().UTC().Truncate(time.Second)}
	var todo []Host
	for _, h := range hosts {
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
	var logMu sync.Mutex
	logf := func(string) {}
	if opt.Log != nil {
		logf = func(s string) { logMu.Lock(); opt.Log(s); logMu.Unlock() }
	}
	rec := &journal{j: j, path: opt.JournalPath, log: logf}
	if opt.JournalPath != "" {
		if err := j.Save(opt.JournalPath); err != nil {
			return nil, err // before any change: refuse to run without a journal
		}
	}

	failures := 0
	for start := 0; start < len(todo); {
		n := opt.Batch
		if start == 0 {
			n = 1 // the canary
		}
		end := min(start+n, len(todo))
		if ctx.Err() != nil {
			break
		}
		var wg sync.WaitGroup
		failed := make([]bool, end-start)
		for i, h := range todo[start:end] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				failed[i] = !applyHost(ctx, h, opt, rec)
			}()
		}
		wg.Wait()
		for _, f := range failed {
			if f {
				failures++
			}
		}
		start = end
		if failures > opt.MaxFailures && start < len(todo) {
			for _, h := range todo[start:] {
				rec.update(h.Inv.Name, func(hj *remediate.HostJournal) {
					hj.Status = remediate.StatusUnchanged
					hj.Error = fmt.Sprintf("not started: %d host(s) failed, more than --max-failures %d", failures, opt.MaxFailures)
				})
				logf(fmt.Sprintf("%s: not started (%d failed host(s), --max-failures %d)", h.Inv.Name, failures, opt.MaxFailures))
			}
			break
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
	rec.mu.Lock()
	j.FinishedAt = time.Now().UTC().Truncate(time.Second)
	rec.saveLocked()
	err := rec.err
	rec.mu.Unlock()
	return j, err
}

// readState is what the read step found on a host.
type readState struct {
	files   map[string]fileState
	runtime map[string]string // sysctl key → value
	nic     map[string]string // "eth0 gro" → value
	ethtool string            // its path on the host, when NICs were read
}

type fileState struct {
	exists  bool
	sha     string
	mode    string // "644:root:root" or "-"
	content []byte
}

func runScript(ctx context.Context, opt Options, h inventory.Host, script []byte, step string) (*transport.Output, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	out, err := opt.Runner.Run(ctx, audit.Target(h, opt.ConnectTimeout), script)
	return out, inStep(err, step)
}

// inStep names the step in a transport error, whose messages say "during
// gather" (the audit's only script) for any script that was cut off.
func inStep(err error, step string) error {
	var te *transport.Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "during gather") {
		return err
	}
	c := *te
	c.Msg = strings.Replace(c.Msg, "during gather", "during the "+step, 1)
	return &c
}

// stderrTail is a short excerpt of a script's stderr for an error
// message. The scripts never print file contents to stderr.
func stderrTail(out *transport.Output) string {
	if out == nil {
		return ""
	}
	s := strings.TrimSpace(string(out.Stderr))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// read runs the read step.
func read(ctx context.Context, opt Options, h inventory.Host, files, keys []string, nics []NICRead) (*readState, error) {
	marker := NewMarker()
	script, err := ReadScript(ReadParams{Marker: marker, Files: files, Sysctls: keys, NICs: nics})
	if err != nil {
		return nil, err
	}
	out, err := runScript(ctx, opt, h, script, "read script")
	if err != nil {
		return nil, fmt.Errorf("read: %v", err)
	}
	rs := ParseResults(out.Stdout, marker)
	if f := firstFailure(rs); f != nil {
		return nil, fmt.Errorf("read: %s%s", detail(f), stderrTail(out))
	}
	if d := find(rs, "done"); d == nil {
		return nil, fmt.Errorf("read: the script did not finish%s", stderrTail(out))
	}
	st := &readState{files: map[string]fileState{}, runtime: map[string]string{}, nic: map[string]string{}}
	for i, p := range files {
		r := find(rs, fmt.Sprintf("file-%d", i))
		if r == nil || len(r.Detail) == 0 {
			return nil, fmt.Errorf("read: no result for %s", p)
		}
		if r.Detail[0] == "absent" {
			st.files[p] = fileState{}
			continue
		}
		if r.Detail[0] != "present" || len(r.Detail) != 4 {
			return nil, fmt.Errorf("read: malformed result for %s", p)
		}
		content, err := base64.StdEncoding.DecodeString(r.Detail[3])
		if err != nil {
			return nil, fmt.Errorf("read: %s: content is not base64", p)
		}
		if SHA256(content) != r.Detail[1] {
			return nil, fmt.Errorf("read: %s: content does not match its sha256 (changing while read?)", p)
		}
		st.files[p] = fileState{exists: true, sha: r.Detail[1], mode: r.Detail[2], content: content}
	}
	for i, k := range keys {
		r := find(rs, fmt.Sprintf("sysctl-%d", i))
		if r == nil || len(r.Detail) == 0 {
			return nil, fmt.Errorf("read: no result for %s", k)
		}
		st.runtime[k] = sysctld.Fold(strings.Join(r.Detail, " "))
	}
	if len(nics) > 0 {
		r := find(rs, "ethtool")
		if r == nil || len(r.Detail) != 1 {
			return nil, errors.New("read: no ethtool path")
		}
		st.ethtool = r.Detail[0]
	}
	for i, n := range nics {
		r := find(rs, fmt.Sprintf("nic-%d", i))
		if r == nil || len(r.Detail) != 1 {
			return nil, fmt.Errorf("read: no result for %s", n.Target)
		}
		st.nic[n.Target] = r.Detail[0]
	}
	return st, nil
}

// prepared is what the apply step will do on a host.
type prepared struct {
	params  ApplyParams
	backups []remediate.Backup
	runtime []remediate.RuntimeValue
}

// prepare computes the new file contents and the journal records from
// what was read. It changes nothing.
func prepare(runID string, changes []remediate.Change, st *readState) (*prepared, error) {
	p := &prepared{params: ApplyParams{RunID: runID}}
	persist := map[string]string{}
	propsByFile := map[string]map[string]string{}
	var nicPersist []NICSetting
	for _, c := range changes {
		switch c.Kind {
		case remediate.KindNICRing, remediate.KindNICOffload:
			iface, setting, err := nicTarget(c.Kind, c.Target)
			if err != nil {
				return nil, err
			}
			if err := checkNICValue(c.Kind, c.Target, c.To); err != nil {
				return nil, err
			}
			before := st.nic[c.Target]
			if err := checkNICValue(c.Kind, c.Target, before); err != nil {
				return nil, fmt.Errorf("current value of %s: %w", c.Target, err)
			}
			if before != c.To {
				p.params.Runtime = append(p.params.Runtime, RuntimeWrite{Kind: c.Kind, Key: c.Target, Before: before, To: c.To})
				p.runtime = append(p.runtime, remediate.RuntimeValue{Kind: c.Kind, Key: c.Target, Before: before, After: c.To})
			}
			if c.Persist {
				nicPersist = append(nicPersist, NICSetting{Kind: c.Kind, Iface: iface, Setting: setting, Value: c.To, Path: c.PersistPath, Match: c.PersistMatch})
			}
		case remediate.KindSysctl:
			if err := CheckSysctlKey(c.Target); err != nil {
				return nil, err
			}
			if err := CheckSysctlValue(c.Target, c.To); err != nil {
				return nil, err
			}
			if c.Runtime {
				before := st.runtime[c.Target]
				if err := CheckSysctlValue(c.Target, before); err != nil {
					return nil, fmt.Errorf("current value of %s: %w", c.Target, err)
				}
				if before != c.To {
					p.params.Runtime = append(p.params.Runtime, RuntimeWrite{Key: c.Target, Before: before, To: c.To})
					p.runtime = append(p.runtime, remediate.RuntimeValue{Kind: remediate.KindSysctl, Key: c.Target, Before: before, After: c.To})
				}
			}
			if c.Persist {
				persist[c.Target] = c.To
			}
		case remediate.KindKafkaProperty:
			if err := CheckPropertiesPath(c.PersistPath); err != nil {
				return nil, err
			}
			if err := props.Check(c.Target, c.To); err != nil {
				return nil, err
			}
			if propsByFile[c.PersistPath] == nil {
				propsByFile[c.PersistPath] = map[string]string{}
			}
			propsByFile[c.PersistPath][c.Target] = c.To
		default:
			return nil, fmt.Errorf("%s change %s: not applied by this kaudit", c.Kind, c.Target)
		}
	}
	add := func(path string, fs fileState, content []byte, mode string) {
		if fs.exists && string(content) == string(fs.content) {
			return // already as wanted
		}
		i := len(p.params.Files)
		p.params.Files = append(p.params.Files, FileWrite{Path: path, Existed: fs.exists, OldSHA: fs.sha, Content: content, Mode: mode})
		b := remediate.Backup{Path: path, Existed: fs.exists}
		if fs.exists {
			b.SHA256 = fs.sha
			b.Stored = RunDir(runID) + "/" + BackupName(i)
			if m, owner, ok := strings.Cut(fs.mode, ":"); ok {
				b.Mode = "0" + m
				b.Owner = owner
			}
		}
		p.backups = append(p.backups, b)
	}
	// Properties first: a failure writing the managed sysctl file then
	// also exercises the restore of server.properties.
	for _, path := range sortedKeys(propsByFile) {
		fs := st.files[path]
		if !fs.exists {
			return nil, fmt.Errorf("%s does not exist on the host: kaudit edits server.properties, it does not create it", path)
		}
		out, _, err := props.Set(fs.content, propsByFile[path], props.AppendComment("added by kaudit fix, run "+runID))
		if err != nil {
			// props.Set's messages can quote other keys' values, and the
			// file can hold secrets: say only which keys.
			return nil, fmt.Errorf("%s: cannot edit %s safely (the edit's self-check failed)", path, strings.Join(sortedKeys(propsByFile[path]), ", "))
		}
		add(path, fs, out, "")
	}
	if len(persist) > 0 {
		fs := st.files[sysctld.ManagedPath]
		var existing []byte
		if fs.exists {
			existing = fs.content
			cur, err := sysctld.Parse(existing)
			if err != nil {
				return nil, err
			}
			same := true
			for k, v := range persist {
				if cur[k] != v {
					same = false
				}
			}
			if same {
				persist = nil // already persisted: do not rewrite the header only
			}
		}
		if persist != nil {
			out, err := sysctld.Render(existing, persist, runID)
			if err != nil {
				return nil, err
			}
			add(sysctld.ManagedPath, fs, out, ManagedFileMode)
		}
	}
	nicFiles, nmWrites, err := renderNICPersist(nicPersist, st, runID)
	if err != nil {
		return nil, err
	}
	for _, nf := range nicFiles {
		add(nf.path, st.files[nf.path], nf.content, nf.mode)
	}
	for _, w := range nmWrites {
		p.params.Runtime = append(p.params.Runtime, w)
		p.runtime = append(p.runtime, remediate.RuntimeValue{Kind: w.Kind, Key: w.Key, Before: w.Before, After: w.To})
	}
	return p, nil
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// filesOf lists the files, sysctls and NIC settings a set of changes
// touches.
func filesOf(changes []remediate.Change) (files, keys []string, nics []NICRead) {
	seen := map[string]bool{}
	for _, c := range changes {
		var f string
		switch c.Kind {
		case remediate.KindNICRing, remediate.KindNICOffload:
			if c.Runtime || c.Persist {
				nics = append(nics, NICRead{Kind: c.Kind, Target: c.Target})
			}
			if c.Persist {
				f = nicPersistFile(c)
				nics = append(nics, nmReads(c)...)
			}
		case remediate.KindSysctl:
			if c.Runtime {
				keys = append(keys, c.Target)
			}
			if c.Persist {
				f = sysctld.ManagedPath
			}
		case remediate.KindKafkaProperty:
			f = c.PersistPath
		}
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, keys, nics
}

// applyHost runs one host through read, apply, verify (and restore on
// failure). It reports whether the host ended verified or unchanged.
func applyHost(ctx context.Context, h Host, opt Options, rec *journal) bool {
	name := h.Inv.Name
	changes, _ := Split(h.Plan, h.Findings)
	fail := func(status, msg string) bool {
		rec.update(name, func(hj *remediate.HostJournal) { hj.Status = status; hj.Error = msg })
		rec.logf("%s: %s: %s", name, status, msg)
		return false
	}

	files, keys, nics := filesOf(changes)
	st, err := read(ctx, opt, h.Inv, files, keys, nics)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	prep, err := prepare(opt.RunID, changes, st)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Backups = prep.backups; hj.Runtime = prep.runtime })
	if len(prep.params.Files) == 0 && len(prep.params.Runtime) == 0 {
		rec.update(name, func(hj *remediate.HostJournal) {
			hj.Status = remediate.StatusUnchanged
			hj.Error = "already as planned when read: nothing changed"
		})
		rec.logf("%s: already as planned: nothing changed", name)
		return true
	}

	marker := NewMarker()
	prep.params.Marker = marker
	script, err := ApplyScript(prep.params)
	if err != nil {
		return fail(remediate.StatusUnchanged, "nothing changed: "+err.Error())
	}
	rec.logf("%s: applying %d running value(s), %d file(s); backups in %s", name, len(prep.params.Runtime), len(prep.params.Files), RunDir(opt.RunID))
	out, runErr := runScript(ctx, opt, h.Inv, script, "apply script")
	var rs []Result
	if out != nil {
		rs = ParseResults(out.Stdout, marker)
	}
	if runErr != nil || find(rs, "done") == nil {
		why := ""
		if f := firstFailure(rs); f != nil {
			why = fmt.Sprintf("step %s failed: %s%s", f.Step, detail(f), stderrTail(out))
			if !changedAnything(rs, f.Step) {
				return fail(remediate.StatusUnchanged, "nothing changed: "+why)
			}
		} else if runErr != nil {
			why = "apply: " + runErr.Error()
		} else {
			why = "apply: the script did not finish" + stderrTail(out)
		}
		return restore(ctx, h, opt, rec, why)
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Status = remediate.StatusApplied })

	if err := verify(ctx, h, opt, changes); err != nil {
		return restore(ctx, h, opt, rec, "verification failed: "+err.Error())
	}
	rec.update(name, func(hj *remediate.HostJournal) { hj.Status = remediate.StatusVerified; hj.Error = "" })
	msg := fmt.Sprintf("%s: verified %d change(s)", name, len(changes))
	if h.Plan.RestartRequired() {
		msg += "; broker restart required for the Kafka changes to take effect (kaudit never restarts it)"
	}
	rec.logf("%s", msg)
	return true
}

// changedAnything reports whether the apply script may have changed
// something before failing at step failed: only the running-value and
// file steps change anything.
func changedAnything(rs []Result, failed string) bool {
	changes := func(step string) bool {
		return strings.HasPrefix(step, "sysctl-") || strings.HasPrefix(step, "nic-") || strings.HasPrefix(step, "file-")
	}
	if changes(failed) {
		return true
	}
	for _, r := range rs {
		if changes(r.Step) {
			return true
		}
	}
	return false
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
	res, err := rollbackHost(rctx, h.Inv, opt, rec.j.RunID, hj)
	if err != nil {
		rec.update(name, func(j *remediate.HostJournal) {
			j.Status = remediate.StatusFailed
			j.Error = why + "; restoring FAILED: " + err.Error() + " (retry with kaudit rollback --run " + rec.j.RunID + ")"
		})
		rec.logf("%s: restoring failed: %v", name, err)
		return false
	}
	rec.update(name, func(j *remediate.HostJournal) {
		j.Status = remediate.StatusRolledBack
		j.Error = why + "; restored from the backups (" + res + ")"
	})
	rec.logf("%s: restored (%s)", name, res)
	return false
}

// RollbackResult is one host's outcome of Rollback.
type RollbackResult struct {
	Host   string
	Detail string // per-item summary: "2 restored, 1 removed, 3 unchanged"
	Err    error
}

// Rollback restores every host of j that has backups or running values
// from the run's backups on the host (see RollbackScript), updates the
// journal's statuses and saves it at opt.JournalPath. Hosts of j missing
// from inv are reported as errors. It is idempotent.
func Rollback(ctx context.Context, inv []inventory.Host, j *remediate.Journal, opt Options) ([]RollbackResult, error) {
	opt.defaults()
	byName := map[string]inventory.Host{}
	for _, h := range inv {
		byName[h.Name] = h
	}
	rec := &journal{j: j, path: opt.JournalPath, log: opt.Log}
	var out []RollbackResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(opt.Batch, 1))
	for _, hj := range j.Hosts {
		if len(hj.Backups) == 0 && len(hj.Runtime) == 0 {
			continue
		}
		h, ok := byName[hj.Host]
		if !ok {
			out = append(out, RollbackResult{Host: hj.Host, Err: errors.New("not in the inventory (or excluded by --limit): not rolled back")})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := rollbackHost(ctx, h, opt, j.RunID, hj)
			rec.update(hj.Host, func(x *remediate.HostJournal) {
				if err != nil {
					x.Status = remediate.StatusFailed
					x.Error = "rollback failed: " + err.Error()
				} else if x.Status != remediate.StatusUnchanged || strings.Contains(res, "restored") || strings.Contains(res, "removed") {
					// A host the run never changed keeps "unchanged".
					x.Status = remediate.StatusRolledBack
					x.Error = "rolled back by kaudit rollback (" + res + ")"
				}
			})
			mu.Lock()
			out = append(out, RollbackResult{Host: hj.Host, Detail: res, Err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(out, func(a, b int) bool { return out[a].Host < out[b].Host })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.saveLocked()
	return out, rec.err
}

// applyWait is how long (seconds) a restore waits for a still running
// apply script of its run (RollbackParams.Wait): half of the per-host
// timeout, at most 30 s.
func applyWait(timeout time.Duration) int {
	return int(min(timeout/2, 30*time.Second) / time.Second)
}

// rollbackHost runs the restore script for one host and summarizes it.
func rollbackHost(ctx context.Context, h inventory.Host, opt Options, runID string, hj remediate.HostJournal) (string, error) {
	marker := NewMarker()
	script, err := RollbackScript(RollbackParams{Marker: marker, RunID: runID, Backups: hj.Backups, Runtime: hj.Runtime, Wait: applyWait(opt.Timeout)})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	out, err := opt.Runner.Run(ctx, audit.Target(h, opt.ConnectTimeout), script)
	if err != nil {
		return "", inStep(err, "restore script")
	}
	rs := ParseResults(out.Stdout, marker)
	counts := map[string]int{}
	var fails []string
	for _, r := range rs {
		if r.Step == "done" {
			continue
		}
		if !r.OK {
			fails = append(fails, r.Step+": "+detail(&r))
			continue
		}
		counts[detail(&r)]++
	}
	var parts []string
	for _, k := range []string{"restored", "removed", "unchanged"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	summary := strings.Join(parts, ", ")
	if len(fails) > 0 {
		return summary, errors.New(strings.Join(fails, "; ") + stderrTail(out))
	}
	d := find(rs, "done")
	if d == nil || detail(d) != "ok" {
		return summary, errors.New("the restore script did not finish" + stderrTail(out))
	}
	return summary, nil
}

// verify gathers the host again and checks that every change reads back:
// the running sysctl value, the boot-time value (facts.Persisted: the
// managed file wins, or a file the plan already warned would override it
// at boot), and each property in its file (read again into memory).
func verify(ctx context.Context, h Host, opt Options, changes []remediate.Change) error {
	keys := append([]string(nil), opt.SysctlKeys...)
	for _, c := range changes {
		if c.Kind == remediate.KindSysctl {
			keys = append(keys, c.Target)
		}
	}
	res := audit.Scan(ctx, []inventory.Host{h.Inv}, audit.Options{
		Concurrency: 1, Timeout: opt.Timeout, ConnectTimeout: opt.ConnectTimeout,
		SysctlKeys: keys, Runner: opt.Runner,
	})
	if len(res) != 1 {
		return errors.New("re-gather returned no result")
	}
	if res[0].Err != nil {
		return fmt.Errorf("re-gather: %s: %s", res[0].Err.Kind, res[0].Err.Msg)
	}
	f := res[0].Facts
	var problems []string
	propsByFile := map[string]map[string]string{}
	for _, c := range changes {
		switch c.Kind {
		case remediate.KindSysctl:
			if c.Runtime {
				if got := sysctld.Fold(f.Sysctl[c.Target]); got != c.To {
					problems = append(problems, fmt.Sprintf("%s is %q at runtime, want %q", c.Target, got, c.To))
				}
			}
			if c.Persist {
				p, ok := f.Persisted[c.Target]
				switch {
				case !ok:
					problems = append(problems, fmt.Sprintf("%s: no boot-time value found (want %q from %s)", c.Target, c.To, sysctld.ManagedPath))
				case p.File == sysctld.ManagedPath && sysctld.Fold(p.Value) != c.To:
					problems = append(problems, fmt.Sprintf("%s: %s says %q, want %q", c.Target, p.File, p.Value, c.To))
				case p.File != sysctld.ManagedPath && sysctld.Fold(p.Value) != c.To && !sysctld.WinsOver(p.File, sysctld.ManagedPath):
					problems = append(problems, fmt.Sprintf("%s: boot-time value %q from %s, want %q from %s", c.Target, p.Value, p.File, c.To, sysctld.ManagedPath))
				}
				// A later file overriding ours was warned about in the
				// plan; the managed file itself was checked by SHA-256.
			}
		case remediate.KindNICRing, remediate.KindNICOffload:
			if p := verifyNIC(f, c); p != "" {
				problems = append(problems, p)
			}
		case remediate.KindKafkaProperty:
			if propsByFile[c.PersistPath] == nil {
				propsByFile[c.PersistPath] = map[string]string{}
			}
			propsByFile[c.PersistPath][c.Target] = c.To
			if f.Kafka != nil && f.Kafka.Config == c.PersistPath {
				if v, ok := f.Kafka.Properties[c.Target]; ok && strings.TrimSpace(v) != c.To {
					problems = append(problems, fmt.Sprintf("%s: the gather reads %q in %s, want %q", c.Target, v, c.PersistPath, c.To))
				}
			}
		}
	}
	if len(propsByFile) > 0 {
		files := sortedKeys(propsByFile)
		st, err := read(ctx, opt, h.Inv, files, nil, nil)
		if err != nil {
			return err
		}
		for _, path := range files {
			fs := st.files[path]
			if !fs.exists {
				problems = append(problems, path+" is gone")
				continue
			}
			entries, err := props.Parse(fs.content)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s does not parse: %v", path, err))
				continue
			}
			for _, k := range sortedKeys(propsByFile[path]) {
				if e, ok := entries[k]; !ok || e.Value != propsByFile[path][k] {
					problems = append(problems, fmt.Sprintf("%s: %s does not read back as %q", path, k, propsByFile[path][k]))
				}
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// verifyNIC checks a NIC change against the re-gathered facts ("" when
// it took). The rule file was checked by SHA-256 when written.
func verifyNIC(f *facts.Facts, c remediate.Change) string {
	iface, setting, _ := nicTarget(c.Kind, c.Target)
	for _, n := range f.NICs {
		if n.Name != iface {
			continue
		}
		if c.Kind == remediate.KindNICRing {
			if n.Ring == nil {
				return fmt.Sprintf("%s: ring sizes not readable after the change (%s)", c.Target, n.RingErr)
			}
			got := n.Ring.RX
			if setting == "tx" {
				got = n.Ring.TX
			}
			if strconv.Itoa(got) != c.To {
				return fmt.Sprintf("%s is %d, want %s", c.Target, got, c.To)
			}
			return ""
		}
		ft, ok := n.Features[setting]
		if !ok {
			return fmt.Sprintf("%s: feature not reported after the change", c.Target)
		}
		if ft.On != (c.To == "on") {
			return fmt.Sprintf("%s is %s, want %s", c.Target, map[bool]string{true: "on", false: "off"}[ft.On], c.To)
		}
		return ""
	}
	return fmt.Sprintf("%s: interface not in the re-gathered facts", c.Target)
}
