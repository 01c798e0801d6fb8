package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/remediate"
)

// RollbackJob is what kaudit rollback undoes: run RunID, from the local
// journal in JournalDir or (FromHosts) one rebuilt from the hosts.
type RollbackJob struct {
	RunID      string
	JournalDir string
	FromHosts  bool
	Yes        bool // do not ask
	Config     RollbackConfig
}

// Check validates the run ID and the fan-out a person asked for.
func (j RollbackJob) Check() error {
	if !remediate.ValidRunID(j.RunID) {
		return fmt.Errorf("rollback needs --run RUN-ID (as printed by fix --apply), got %q", j.RunID)
	}
	if c := j.Config; c.Concurrency < 1 || c.Timeout <= 0 || c.ConnectTimeout <= 0 {
		return errors.New("--concurrency, --timeout and --connect-timeout must be positive")
	}
	return nil
}

// RollbackRun loads the run's journal (a warning per host whose manifest
// is not read), asks, restores every selected host the run changed, and
// prints one line per host and the tally. Its verdict is NotApplied when
// a host could not be read or restored.
func RollbackRun(ctx context.Context, c Console, hosts []inventory.Host, j RollbackJob) error {
	j.Config.JournalPath = JournalPath(j.JournalDir, j.RunID)
	jr, err := loadRun(ctx, c, hosts, j)
	if err != nil {
		return err
	}
	n := RollbackTargets(jr, hosts)
	if n == 0 {
		fmt.Fprintf(c.Stdout, "run %s changed nothing on the selected hosts: nothing to roll back\n", j.RunID)
		return nil
	}
	ok, err := c.Confirm(j.Yes, fmt.Sprintf("roll back run %s on %d hosts?", j.RunID, n), "rollback")
	if err != nil || !ok {
		return err
	}
	ctx, stop := Interruptible(ctx)
	defer stop()
	res, err := Rollback(ctx, hosts, jr, j.Config)
	failed := WriteRollback(c.Stdout, res)
	if err != nil {
		c.Warnf("%v", err)
	}
	WriteRollbackTally(c.Stdout, j.RunID, j.Config.JournalPath, len(res), failed)
	if failed > 0 {
		return Fail(NotApplied, "%d host(s) could not be rolled back: re-run when they are reachable", failed)
	}
	return nil
}

// loadRun is LoadRun with what the person is told on the way.
func loadRun(ctx context.Context, c Console, hosts []inventory.Host, j RollbackJob) (*remediate.Journal, error) {
	run, err := LoadRun(ctx, hosts, j.RunID, j.FromHosts, j.Config)
	if run != nil {
		for _, u := range run.Unread {
			c.Warnf("%s: cannot read the run's manifest: %v", u.Host, u.Err)
		}
	}
	switch {
	case errors.Is(err, ErrJournalExists):
		return nil, fmt.Errorf("%s exists: roll back from it (drop --from-hosts)", j.Config.JournalPath)
	case errors.Is(err, ErrNoJournal):
		return nil, fmt.Errorf("no journal for run %s in %s (set --journal-dir, or --from-hosts to rebuild it from the hosts)", j.RunID, j.JournalDir)
	case errors.Is(err, ErrNoHostRead):
		return nil, Fail(NotApplied, "no host could be read: nothing rolled back")
	case err != nil:
		return nil, err
	case run.Rebuilt:
		fmt.Fprintf(c.Stdout, "journal of run %s rebuilt from %d host(s): %s\n", j.RunID, len(run.Journal.Hosts), j.Config.JournalPath)
	}
	return run.Journal, nil
}
