package pipeline

import (
	"fmt"
	"io"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
)

// What fix, fix --apply and rollback print: the text of each step's
// outcome, rendered from the values the steps return.

// WritePlan renders the fix plan of every audited host of r, after a line
// for each host that was not audited (it has no plan).
func WritePlan(w io.Writer, r *report.Report, sel remediate.Selector) {
	ps, unaudited := Plans(r, sel)
	writeUnaudited(w, unaudited)
	remediate.RenderPlan(w, ps, remediate.PlanOptions{})
}

func writeUnaudited(w io.Writer, hosts []report.Host) {
	for _, h := range hosts {
		fmt.Fprintf(w, "%s: not audited (%s: %s): no plan\n", h.Name, h.Error.Kind, h.Error.Message)
	}
}

// WriteFixPlan is the plan fix --apply is about to carry out: as
// WritePlan, without the plan's "nothing changed (run with --apply)", then
// each change that apply skips, and when only skipped changes are left, a
// line saying nothing will change.
func WriteFixPlan(w io.Writer, fp *FixPlan) {
	writeUnaudited(w, fp.Unaudited)
	remediate.RenderPlan(w, fp.Plans, remediate.PlanOptions{Applying: true})
	for _, s := range fp.Skipped {
		fmt.Fprintf(w, "%s: skipped %s %s → %s: %s\n", s.Host, s.Change.Kind, s.Change.Target, s.Change.To, s.Reason)
	}
	if fp.Changes == 0 && remediate.Summarize(fp.Plans).Changes > 0 { // the plan's summary line was left out
		fmt.Fprintf(w, "no change kaudit applies on %s; nothing changed\n", countOf(len(fp.Plans), "audited host", "audited hosts"))
	}
}

// What is what Apply will do: "N changes on M hosts".
func (fp *FixPlan) What() string {
	return fmt.Sprintf("%s on %s", countOf(fp.Changes, "change", "changes"), countOf(fp.Changing, "host", "hosts"))
}

// WriteRun writes one block per host of a run (status, each change
// from → to, backups, the error), then the tally and restart notes.
func WriteRun(w io.Writer, j *remediate.Journal) {
	var verified, restart int
	for _, hj := range j.Hosts {
		if len(hj.Changes) == 0 {
			continue
		}
		writeHostRun(w, hj)
		if hj.Status == remediate.StatusVerified {
			verified++
			for _, c := range hj.Changes {
				if c.RestartRequired {
					restart++
					break
				}
			}
		}
	}
	fmt.Fprintf(w, "%s changed and verified, %d of them %s a broker restart (kaudit never restarts a broker)\n", countOf(verified, "host", "hosts"), restart, map[bool]string{true: "needs", false: "need"}[restart == 1])
}

func writeHostRun(w io.Writer, hj remediate.HostJournal) {
	fmt.Fprintf(w, "%s: %s\n", hj.Host, hj.Status)
	for _, c := range hj.Changes {
		from := c.From
		if from == "" {
			from = "(unset)"
		}
		fmt.Fprintf(w, "  %s %s: %s → %s", c.Kind, c.Target, from, c.To)
		if c.RestartRequired {
			fmt.Fprint(w, " [broker restart required]")
		}
		fmt.Fprintln(w)
	}
	for _, b := range hj.Backups {
		state := "did not exist"
		if b.Existed {
			state = "sha256 " + b.SHA256 + ", copy " + b.Stored
		}
		fmt.Fprintf(w, "  backup %s (%s)\n", b.Path, state)
	}
	if hj.Error != "" {
		fmt.Fprintf(w, "  %s\n", hj.Error)
	}
}

// WriteRollback writes one line per host of a rollback and returns how
// many hosts failed; WriteRollbackTally writes the closing line.
func WriteRollback(w io.Writer, res []apply.RollbackResult) (failed int) {
	for _, r := range res {
		if r.Err != nil {
			failed++
			fmt.Fprintf(w, "%s: rollback FAILED: %v\n", r.Host, r.Err)
			continue
		}
		fmt.Fprintf(w, "%s: rolled back (%s)\n", r.Host, r.Detail)
	}
	return failed
}

// WriteRollbackTally is a rollback's last line.
func WriteRollbackTally(w io.Writer, runID, journalPath string, hosts, failed int) {
	fmt.Fprintf(w, "run %s: %d host(s) rolled back, %d failed; journal %s\n", runID, hosts-failed, failed, journalPath)
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
