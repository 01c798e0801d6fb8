package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/remediate"
)

// ErrNoHome is journalDir without a directory and without a home
// directory to put the default in.
var ErrNoHome = errors.New("cannot find the home directory for the run journal")

// journalDir is where fix --apply writes a run's journal and rollback
// reads it: dir, or when empty $XDG_STATE_HOME/kaudit/runs (an absolute
// XDG_STATE_HOME only), else ~/.local/state/kaudit/runs. It is created
// (0700: a journal holds the hosts' previous settings), and must be
// private (remediate.CheckPrivate: another user's, or one others may
// write, is refused before any host is contacted). Without a home
// directory the error (ErrNoHome) says to set --journal-dir.
func journalDir(dir string) (string, error) {
	if dir == "" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "kaudit", "runs")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", located.Hint(fmt.Errorf("%w (%v)", ErrNoHome, err), "set --journal-dir")
			}
			dir = filepath.Join(home, ".local", "state", "kaudit", "runs")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("journal directory: %v", err)
	}
	if err := remediate.CheckPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// journalPath is the journal of run runID in dir.
func journalPath(dir, runID string) string { return filepath.Join(dir, runID+".json") }
