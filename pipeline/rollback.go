package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/rules"
)

// RollbackJob is what kaudit rollback undoes: run RunID, from the local
// journal in JournalDir or (FromHosts) one rebuilt from the hosts.
type RollbackJob struct {
	RunID      string
	JournalDir string
	FromHosts  bool
	Yes        bool // do not ask
	// List: list the runs the local journal directory and the hosts hold
	// instead of rolling one back (listRuns).
	List   bool
	Config RollbackConfig
	// Rollout orders and gates the restores as fix --apply's changes:
	// one broker of a cluster at a time (gated with --bootstrap).
	Rollout RolloutConfig
	cluster *ClusterSource // --bootstrap's, the gate reads it (Rollback sets it)
}

// Check validates the run ID and the fan-out a person asked for.
func (j RollbackJob) Check() error {
	if j.List {
		if j.RunID != "" || j.FromHosts || j.Config.Force {
			return errors.New("rollback --list lists the runs: it takes no --run, --from-hosts or --force")
		}
	} else if !remediate.ValidRunID(j.RunID) {
		return fmt.Errorf("rollback needs --run RUN-ID (as printed by fix --apply), got %q", j.RunID)
	}
	if c := j.Config; c.Concurrency < 1 || c.Timeout <= 0 || c.ConnectTimeout <= 0 {
		return errors.New("--concurrency, --timeout and --connect-timeout must be positive")
	}
	if j.Rollout.Resume != "" {
		return errors.New("--resume continues fix --apply, not a rollback (a rollback is idempotent: run it again)")
	}
	return j.Rollout.Check()
}

// Rollback is kaudit rollback: j checked, its journal directory
// made (journalDir of j.JournalDir, the --journal-dir flag), then
// rollbackRun on the hosts of f (without an inventory, the brokers of
// src, as fix found them: loadOrDiscover).
func Rollback(ctx context.Context, c Console, f Fleet, src *ClusterSource, j RollbackJob) error {
	if err := j.Check(); err != nil {
		return err
	}
	if j.Rollout.Restart && (src == nil || j.List) {
		return errors.New("rollback --restart needs --bootstrap (kaudit restarts a broker only while it can see its cluster healthy again) and a run to roll back")
	}
	var err error
	if j.JournalDir, err = journalDir(j.JournalDir); err != nil {
		return err
	}
	_, hosts, err := f.loadOrDiscover(ctx, c, src)
	if err != nil {
		return err
	}
	runner, err := f.connect(c, hosts, &j.Config.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	j.Config.Runner, j.cluster = runner, src
	if j.List {
		return listRuns(ctx, c, hosts, j)
	}
	hosts, refused := src.provenOnly(ctx, c, hosts, j.Config)
	if len(hosts) == 0 && refused > 0 {
		return fail(NotApplied, "nothing rolled back: no host the cluster names is proven its broker (above)")
	}
	err = rollbackRun(ctx, c, hosts, j)
	if err == nil && refused > 0 {
		err = fail(NotApplied, "%d host(s) not proven a broker of the cluster were not rolled back (above)", refused)
	}
	return err
}

// provenOnly is hosts without those the cluster alone named (no
// inventory) that their meta.properties, read now with the read-only
// gather script, does not prove its brokers (ClusterSource.Standing): a
// rollback acts on no other host. Each one left out is said on c's
// stdout, with why; refused counts them. With an inventory, hosts.
func (s *ClusterSource) provenOnly(ctx context.Context, c Console, hosts []inventory.Host, cfg RollbackConfig) (proven []inventory.Host, refused int) {
	if s == nil || s.named == nil {
		return hosts, 0
	}
	res := audit.Scan(ctx, hosts, audit.Options{Concurrency: cfg.Concurrency, Timeout: cfg.Timeout, ConnectTimeout: cfg.ConnectTimeout,
		SysctlKeys: rules.SysctlKeys(), Runner: cfg.Runner})
	for _, r := range res {
		why := ""
		if r.Err != nil {
			why = fmt.Sprintf("not proven a broker of cluster %s (its meta.properties could not be read: %s)", s.found.ID, r.Err.Msg)
		} else if st, _ := s.Standing(r.Host.Name, r.Facts, nil); !st.Acts() {
			why = st.Refusal()
		}
		if why == "" {
			proven = append(proven, r.Host)
			continue
		}
		refused++
		fmt.Fprintf(c.Stdout, "%s: not rolled back: %s\n", termsafe.Line(r.Host.Name), termsafe.Line(why))
	}
	return proven, refused
}

// rollbackRun loads the run's journal (a warning per host whose manifest
// is not read or cannot be trusted), asks, restores every selected host
// the run changed, and prints one line per host and the tally. Its
// verdict is NotApplied when a host's manifest could not be read or
// trusted, or a host could not be restored: "nothing to roll back" only
// when every selected host was read and the run changed none of them.
func rollbackRun(ctx context.Context, c Console, hosts []inventory.Host, j RollbackJob) error {
	j.Config.JournalPath = journalPath(j.JournalDir, j.RunID)
	jr, unread, err := loadRun(ctx, c, hosts, j)
	if err != nil {
		return err
	}
	n := RollbackTargets(jr, hosts)
	if n == 0 && unread > 0 {
		return fail(NotApplied, "nothing rolled back: the run's manifest could not be read or cannot be trusted on %d host(s) (above)", unread)
	}
	if n == 0 {
		for _, hj := range jr.Hosts {
			if len(hj.Backups)+len(hj.Runtime) > 0 {
				fmt.Fprintf(c.Stdout, "%s: nothing to roll back: run %s changed nothing here\n", termsafe.Line(hj.Host), j.RunID)
			}
		}
		fmt.Fprintf(c.Stdout, "run %s changed nothing on the selected hosts: nothing to roll back\n", j.RunID)
		return nil
	}
	ok, err := c.Confirm(j.Yes, fmt.Sprintf("roll back run %s on %d hosts?", j.RunID, n), "rollback")
	if err != nil || !ok {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	ro := rollbackRollout(hosts, jr, j)
	WriteRollout(c.Stdout, ro, restartsOf(jr))
	j.Config.Rollout = &apply.Rollout{Waves: ro.Waves, Gate: newHealthGate(c, ro, ro.cluster, j.cluster).Gate}
	j.Config.Restart = ro.restartOptions()
	j.Config.Log = func(line string) { fmt.Fprintf(c.Stderr, "kaudit: %s\n", termsafe.Line(line)) }
	res, err := Restore(ctx, hosts, jr, j.Config)
	failed := writeRollback(c.Stdout, res)
	if err != nil {
		c.Warnf("%v", err)
	}
	writeRollbackTally(c.Stdout, j.RunID, j.Config.JournalPath, len(res)+unread, failed+unread)
	if failed+unread > 0 {
		return failHint(NotApplied, "re-run when they are reachable (a manifest that cannot be trusted, or an item REFUSED above: restore by hand)", "%d host(s) could not be rolled back", failed+unread)
	}
	return nil
}

// restartsOf are the hosts of jr whose run made a change that needs a
// broker restart: restoring it needs one too (the plan's mark; the
// restart itself follows what the restore changed back).
func restartsOf(jr *remediate.Journal) map[string]bool {
	out := map[string]bool{}
	for _, hj := range jr.Hosts {
		for _, c := range hj.Changes {
			if c.RestartRequired && hj.Owns() {
				out[hj.Host] = true
			}
		}
	}
	return out
}

// loadRun is LoadRun with what the person is told on the way; unread
// counts the hosts whose manifest could not be read or trusted.
func loadRun(ctx context.Context, c Console, hosts []inventory.Host, j RollbackJob) (jr *remediate.Journal, unread int, err error) {
	run, err := LoadRun(ctx, hosts, j.RunID, j.FromHosts, j.Config)
	if run != nil {
		for _, u := range run.Unread {
			var untrusted *apply.UntrustedManifestError
			if errors.As(u.Err, &untrusted) {
				c.Warnf("%s: %v", u.Host, u.Err)
			} else {
				c.Warnf("%s: cannot read the run's manifest: %v", u.Host, u.Err)
			}
		}
		unread = len(run.Unread)
	}
	switch {
	case errors.Is(err, ErrJournalExists):
		return nil, 0, located.Hint(fmt.Errorf("%s exists", j.Config.JournalPath), "roll back from it (drop --from-hosts)")
	case errors.Is(err, ErrNoJournal):
		return nil, 0, located.Hint(fmt.Errorf("no journal for run %s in %s", j.RunID, j.JournalDir), "set --journal-dir, or --from-hosts to rebuild it from the hosts")
	case errors.Is(err, ErrNoHostRead):
		return nil, 0, fail(NotApplied, "no host's manifest could be read and trusted: nothing rolled back")
	case errors.Is(err, ErrNoHostHasRun):
		// Every selected host was read and none has the run: a mistyped
		// run ID, another inventory, or a run that changed no host.
		return nil, 0, located.Hint(fmt.Errorf("no host of the inventory (%d read) has run %s in %s: nothing to roll back",
			len(hosts), j.RunID, apply.RunDir(j.RunID)), "check the run ID: kaudit rollback INVENTORY --list lists the runs the hosts and the journal hold")
	case err != nil:
		return nil, 0, err
	case run.Rebuilt:
		fmt.Fprintf(c.Stdout, "journal of run %s rebuilt from %d host(s): %s\n", j.RunID, len(run.Journal.Hosts), j.Config.JournalPath)
	}
	return run.Journal, unread, nil
}

// listRuns prints the runs found in the local journal directory and on
// hosts: per run its start and, per host, what its journal says and what
// the host holds of it; then each host's lease (the run changing it).
// Its verdict is NotApplied when a host could not be read.
func listRuns(ctx context.Context, c Console, hosts []inventory.Host, j RollbackJob) error {
	type row struct{ journal, host string }
	started := map[string]string{}
	table := map[string]map[string]*row{}
	at := func(run, host string) *row {
		if table[run] == nil {
			table[run] = map[string]*row{}
		}
		if table[run][host] == nil {
			table[run][host] = &row{journal: "-", host: "-"}
		}
		return table[run][host]
	}
	selected := map[string]bool{}
	for _, h := range hosts {
		selected[h.Name] = true
	}
	paths, _ := filepath.Glob(filepath.Join(j.JournalDir, "*.json"))
	for _, p := range paths {
		jr, err := remediate.LoadJournal(p)
		if err != nil {
			c.Warnf("%v", err)
			continue
		}
		started[jr.RunID] = jr.StartedAt.UTC().Format("2006-01-02 15:04:05")
		for _, hj := range jr.Hosts {
			if !selected[hj.Host] {
				continue
			}
			st := string(hj.Status)
			if !hj.Owns() {
				st += ", changed nothing"
			}
			at(jr.RunID, hj.Host).journal = st
		}
	}
	runs, leases, errs := apply.HostRuns(ctx, hosts, j.Config.options())
	for _, r := range runs {
		at(r.RunID, r.Host).host = r.Describe()
		if _, ok := started[r.RunID]; !ok {
			started[r.RunID] = runIDTime(r.RunID)
		}
	}
	ids := slices.Sorted(maps.Keys(table))
	if len(ids) == 0 {
		fmt.Fprintf(c.Stdout, "no runs in %s nor on the %d host(s) read\n", j.JournalDir, len(hosts)-len(errs))
	} else {
		fmt.Fprintf(c.Stdout, "%-26s  %-19s  %-16s  %-32s  %s\n", "RUN", "STARTED (UTC)", "HOST", "JOURNAL", "ON THE HOST")
	}
	for _, id := range ids {
		first := true
		for _, h := range hosts {
			r := table[id][h.Name]
			if r == nil {
				continue
			}
			runCol, startCol := id, started[id]
			if !first {
				runCol, startCol = "", ""
			}
			first = false
			fmt.Fprintf(c.Stdout, "%-26s  %-19s  %-16s  %-32s  %s\n", runCol, startCol, termsafe.Line(h.Name), r.journal, r.host)
		}
	}
	for _, l := range leases {
		fmt.Fprintf(c.Stdout, "%s\n", termsafe.Line(l.String()))
	}
	for _, e := range errs {
		c.Warnf("%s: cannot list its runs: %v", e.Host, e.Err)
	}
	if len(errs) > 0 {
		return fail(NotApplied, "%d host(s) could not be read: their runs are not listed", len(errs))
	}
	return nil
}

// runIDTime is the start a run ID carries (NewRunID), "?" when none.
func runIDTime(id string) string {
	if len(id) < 16 {
		return "?"
	}
	t, err := time.Parse("20060102T150405Z", id[:16])
	if err != nil {
		return "?"
	}
	return t.Format("2006-01-02 15:04:05")
}
