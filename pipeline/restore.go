package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
)

// Defaults of a rollback's fan-out, as kaudit rollback has them.
const (
	DefaultRollbackConcurrency = 8
	DefaultRollbackTimeout     = 60 * time.Second
)

// RollbackConfig is what a rollback needs besides its hosts and journal.
type RollbackConfig struct {
	Runner         transport.Runner // nil: transport.NewSSH()
	JournalPath    string           // the run's local journal (updated as hosts are restored)
	Concurrency    int              // hosts read at once (manifests, --list); restored at once without a Rollout
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// Force overwrites what changed since the run (else kept, and said).
	Force bool
	// Rollout orders and gates the hosts (nil: Concurrency at a time).
	Rollout *apply.Rollout
	// Restart (rollback --restart, Rollout.restartOptions): restart the
	// brokers whose restored changes need it; nil: none.
	Restart *apply.RestartOptions
	Log     func(line string) // the restarts' and watches' progress
}

func (c RollbackConfig) options() apply.Options {
	return apply.Options{
		Runner: c.Runner, Timeout: c.Timeout, ConnectTimeout: c.ConnectTimeout,
		Batch: c.Concurrency, JournalPath: c.JournalPath, Force: c.Force, Rollout: c.Rollout,
		Restart: c.Restart, Log: c.Log,
	}
}

// Errors of LoadRun.
var (
	ErrJournalExists = errors.New("the run's local journal exists") // with fromHosts
	ErrNoJournal     = errors.New("no local journal for the run")   // without fromHosts
	ErrNoHostRead    = errors.New("no host's manifest could be read")
	ErrNoHostHasRun  = errors.New("no host has the run") // with fromHosts: every host read, none has it
)

// RunMismatchError is a local journal that holds another run.
type RunMismatchError struct{ Path, Want, Got string }

func (e *RunMismatchError) Error() string {
	return fmt.Sprintf("%s holds run %s, not %s", e.Path, e.Got, e.Want)
}

// Run is the journal a rollback works from.
type Run struct {
	Journal *remediate.Journal
	Rebuilt bool                   // rebuilt from the hosts' manifests (and saved at the journal path)
	Unread  []apply.RollbackResult // hosts whose manifest could not be read
}

// LoadRun is the journal of run runID: the local one at cfg.JournalPath,
// or with fromHosts (and no local one) the one rebuildJournal rebuilds
// from hosts. Run.Unread is set even when the error is ErrNoHostRead.
func LoadRun(ctx context.Context, hosts []inventory.Host, runID string, fromHosts bool, cfg RollbackConfig) (*Run, error) {
	j, err := remediate.LoadJournal(cfg.JournalPath)
	switch {
	case err == nil && fromHosts:
		return nil, ErrJournalExists
	case err == nil:
		if j.RunID != runID {
			return nil, &RunMismatchError{Path: cfg.JournalPath, Want: runID, Got: j.RunID}
		}
		return &Run{Journal: j}, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	case !fromHosts:
		return nil, ErrNoJournal
	}
	j, unread, err := rebuildJournal(ctx, hosts, runID, cfg)
	run := &Run{Journal: j, Rebuilt: true, Unread: unread}
	switch {
	case j == nil:
		return nil, err
	case len(j.Hosts) == 0 && len(unread) > 0:
		return run, ErrNoHostRead
	case len(j.Hosts) == 0:
		return run, ErrNoHostHasRun
	case err != nil:
		return run, err
	}
	return run, nil // a rebuilt journal holds runID (apply.JournalFromHosts)
}

// rebuildJournal reads the manifests run runID left on hosts and returns
// the journal they describe, saved at cfg.JournalPath, and the hosts whose
// manifest could not be read. A nil journal means nothing was read (the
// error says why); when no host could be read, nothing is saved and the
// journal has no host.
func rebuildJournal(ctx context.Context, hosts []inventory.Host, runID string, cfg RollbackConfig) (*remediate.Journal, []apply.RollbackResult, error) {
	j, unread, err := apply.JournalFromHosts(ctx, hosts, runID, cfg.options())
	if err != nil || (len(j.Hosts) == 0 && len(unread) > 0) {
		return j, unread, err
	}
	return j, unread, j.Save(cfg.JournalPath)
}

// RollbackTargets counts the hosts of j, among hosts, that the run changed.
func RollbackTargets(j *remediate.Journal, hosts []inventory.Host) int {
	selected := map[string]bool{}
	for _, h := range hosts {
		selected[h.Name] = true
	}
	n := 0
	for _, hj := range j.Hosts {
		if hj.Owns() && selected[hj.Host] {
			n++
		}
	}
	return n
}

// Restore restores every host of j among hosts from the backups the run
// kept on it; one result per host, failures as values.
func Restore(ctx context.Context, hosts []inventory.Host, j *remediate.Journal, cfg RollbackConfig) ([]apply.RollbackResult, error) {
	return apply.Rollback(ctx, hosts, j, cfg.options())
}
