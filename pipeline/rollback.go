package pipeline

import (
	"context"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
)

// RollbackConfig is what a rollback needs besides its hosts and journal.
type RollbackConfig struct {
	Runner         transport.Runner // nil: transport.NewSSH()
	JournalPath    string           // the run's local journal (updated as hosts are restored)
	Concurrency    int              // hosts restored at once
	Timeout        time.Duration
	ConnectTimeout time.Duration
}

func (c RollbackConfig) options() apply.Options {
	return apply.Options{
		Runner: c.Runner, Timeout: c.Timeout, ConnectTimeout: c.ConnectTimeout,
		Batch: c.Concurrency, JournalPath: c.JournalPath,
	}
}

// RebuildJournal reads the manifests run runID left on hosts and returns
// the journal they describe, saved at cfg.JournalPath, and the hosts whose
// manifest could not be read. A nil journal means nothing was read (the
// error says why); when no host could be read, nothing is saved and the
// journal has no host.
func RebuildJournal(ctx context.Context, hosts []inventory.Host, runID string, cfg RollbackConfig) (*remediate.Journal, []apply.RollbackResult, error) {
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
		if (len(hj.Backups) > 0 || len(hj.Runtime) > 0) && selected[hj.Host] {
			n++
		}
	}
	return n
}

// Rollback restores every host of j among hosts from the backups the run
// kept on it; one result per host, failures as values.
func Rollback(ctx context.Context, hosts []inventory.Host, j *remediate.Journal, cfg RollbackConfig) ([]apply.RollbackResult, error) {
	return apply.Rollback(ctx, hosts, j, cfg.options())
}
