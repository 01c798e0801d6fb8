package pipeline

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/remediate"
)

// resumed is the journal of the run --resume continues (nil without
// --resume): it must be in the journal directory and have stopped before
// its end.
func (j FixJob) resumed() (*remediate.Journal, error) {
	id := j.Rollout.Resume
	if id == "" {
		return nil, nil
	}
	jr, err := remediate.LoadJournal(journalPath(j.JournalDir, id))
	if err != nil {
		return nil, located.Hint(fmt.Errorf("--resume %s: %w", id, err), "give the --journal-dir the run was written to (kaudit rollback --list lists the runs)")
	}
	if jr.RunID != id {
		return nil, &RunMismatchError{Path: journalPath(j.JournalDir, id), Want: id, Got: jr.RunID}
	}
	if jr.Stopped == nil {
		return nil, located.Hint(fmt.Errorf("--resume %s: the run was not stopped by a rollout's gate", id), "a run that ended needs no resume: run kaudit fix --apply again for a new run")
	}
	return jr, nil
}

// resumeArgs are the arguments of kaudit fix that continue the run (its
// id is added by writeStopped): the fleet, the rollout's flags that are
// not the defaults.
func (j FixJob) resumeArgs() []string {
	args := append([]string{"fix"}, j.resume...)
	r := j.Rollout.withDefaults()
	if r.Batch != 1 {
		args = append(args, "--batch", strconv.Itoa(r.Batch))
	}
	if r.ByRack {
		args = append(args, "--batch-by", "rack")
	}
	if r.Pause != 0 {
		args = append(args, "--pause", r.Pause.String())
	}
	if r.Health.Checks != DefaultHealthChecks {
		args = append(args, "--health-checks", strconv.Itoa(r.Health.Checks))
	}
	if r.Health.Interval != DefaultHealthInterval {
		args = append(args, "--health-interval", r.Health.Interval.String())
	}
	if r.Health.Timeout != DefaultHealthTimeout {
		args = append(args, "--health-timeout", r.Health.Timeout.String())
	}
	return append(args, "--apply")
}

// writeStopped says where a rollout stopped: why, the hosts it changed
// (verified, not changed again by a resume), those it did not start,
// and the command that continues it.
func writeStopped(w io.Writer, jr *remediate.Journal, args []string) {
	st := jr.Stopped
	if st == nil {
		return
	}
	var done []string
	for _, hj := range jr.Hosts {
		if hj.Status == remediate.StatusVerified {
			done = append(done, hj.Host)
		}
	}
	fmt.Fprintf(w, "stopped: %s\n", termsafe.Line(st.Reason))
	fmt.Fprintf(w, "  verified (a resume leaves them as they are): %s\n", termsafe.Line(listOrNone(done)))
	fmt.Fprintf(w, "  not started: %s\n", termsafe.Line(listOrNone(st.Next)))
	if len(st.Next) == 0 {
		return
	}
	words := make([]string, 0, len(args)+3)
	words = append(words, "kaudit")
	for _, a := range args {
		words = append(words, remote.QuoteWord(a))
	}
	fmt.Fprintf(w, "continue: %s --resume %s\n", strings.Join(words, " "), jr.RunID)
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
