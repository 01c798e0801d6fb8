package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/remediate"
)

// errNoHome is journalDir without a directory and without a home
// directory to put the default in.
var errNoHome = errors.New("cannot find the home directory for the run journal")

// journalDir is where fix --apply writes a run's journal and rollback
// reads it: dir, or when empty $XDG_STATE_HOME/kaudit/runs (an absolute
// XDG_STATE_HOME only), else ~/.local/state/kaudit/runs. It is created
// (0700: a journal holds the hosts' previous settings), and must be
// private (remediate.CheckPrivate: another user's, or one others may
// write, is refused before any host is contacted). Without a home
// directory the error (errNoHome) says to set --journal-dir.
func journalDir(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = stateDir("runs"); err != nil {
			return "", located.Hint(fmt.Errorf("%w (%v)", errNoHome, err), "set --journal-dir")
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

// stateDir is kaudit's state directory sub: $XDG_STATE_HOME/kaudit/sub
// (an absolute XDG_STATE_HOME only), else ~/.local/state/kaudit/sub.
func stateDir(sub string) (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "kaudit", sub), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "kaudit", sub), nil
}

// ProbeRecordsOff is the --probe-records value that keeps no probe verdicts.
const ProbeRecordsOff = "off"

// probeRecordsAt is where the probe's verdicts are kept (probe.Records):
// dir, or when empty kaudit's state directory's probes
// (~/.local/state/kaudit/probes); nil for ProbeRecordsOff, or when there
// is no home directory for the default. Nothing is created until a probe
// is recorded.
func probeRecordsAt(dir string) *probe.Records {
	switch dir {
	case ProbeRecordsOff:
		return nil
	case "":
		d, err := stateDir("probes")
		if err != nil {
			return nil
		}
		dir = d
	}
	return &probe.Records{Dir: dir}
}

// journalPath is the journal of run runID in dir.
func journalPath(dir, runID string) string { return filepath.Join(dir, runID+".json") }
