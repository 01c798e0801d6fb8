package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/words"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
	"github.com/kaudit/kaudit/report"
)

// What fix, fix --apply and rollback print: the text of each step's
// outcome, rendered from the values the steps return. Host names, values
// and error text are made visible with termsafe (a host's text is
// untrusted); plans are wrapped at a width (0: no limit).

// WritePlan renders the fix plan of every audited host of r, after a line
// for each host that was not audited and each host refused (neither has
// a plan), at width.
func WritePlan(w io.Writer, r *report.Report, sel remediate.Selector, refused Refusals, width int) {
	ps, unaudited, not := plans(r, sel, refused)
	writeUnaudited(w, unaudited, width)
	writeRefused(w, not, width)
	writeChangeGroups(w, ps, report.ClustersByHost(r), width)
	remediate.RenderPlan(w, ps, remediate.PlanOptions{Width: width, Unaudited: len(unaudited), Refused: len(not)})
}

// writeRefused is a line per host kaudit does not change: "HOST: not
// changed: not proven a broker of cluster X (why)".
func writeRefused(w io.Writer, not []Refused, width int) {
	for _, n := range not {
		for _, l := range termui.Wrap(termsafe.Line(n.Host+": not changed: "+n.Why), width, 4) {
			fmt.Fprintln(w, l)
		}
	}
}

// writePlanSummary is the plan of r in one sentence ("Fix plan: 68
// changes on 6 hosts, 4 need a broker restart, 19 manual actions", then
// note), then hint (where the whole plan is) indented under it; both
// wrapped at width.
func writePlanSummary(w io.Writer, r *report.Report, sel remediate.Selector, note, hint string, width int) {
	ps, _, _ := plans(r, sel, nil)
	s := remediate.Summarize(ps)
	verb := "need"
	if s.Restarts == 1 {
		verb = "needs"
	}
	line := fmt.Sprintf("Fix plan: %s on %s, %d %s a broker restart, %s %s",
		words.Count(s.Changes, "change", "changes"), words.Count(s.Hosts, "host", "hosts"), s.Restarts, verb,
		words.Count(s.Manual, "manual action", "manual actions"), note)
	for _, l := range termui.Wrap(line, width, 4) {
		fmt.Fprintln(w, l)
	}
	for _, l := range termui.Wrap(hint, width-4, 4) {
		fmt.Fprintln(w, "    "+l)
	}
}

// writeDemoPlan is the fix plan kaudit demo shows under its report: the
// summary and where the whole plan is, or with verbose the whole plan.
func writeDemoPlan(w io.Writer, r *report.Report, verbose bool, width int) {
	if verbose {
		fmt.Fprintln(w, "\nFix plan (kaudit fix INVENTORY; nothing is changed by the demo)")
		WritePlan(w, r, remediate.Selector{}, nil, width)
		return
	}
	fmt.Fprintln(w)
	writePlanSummary(w, r, remediate.Selector{}, "(nothing is changed by the demo)",
		"the whole plan: kaudit demo -v · on your fleet: kaudit fix INVENTORY", width)
}

func writeUnaudited(w io.Writer, hosts []report.Host, width int) {
	for _, h := range hosts {
		line := fmt.Sprintf("%s: not audited (%s: %s): no plan", h.Name, h.Error.Kind, h.Error.Message)
		for _, l := range termui.Wrap(termsafe.Line(line), width, 4) {
			fmt.Fprintln(w, l)
		}
	}
}

// WriteFixPlan is the plan fix --apply is about to carry out: as
// WritePlan, without the plan's "nothing changed (run with --apply)", then
// each change that apply skips, and when only skipped changes are left, a
// line saying nothing will change.
func WriteFixPlan(w io.Writer, fp *FixPlan, width int) {
	writeUnaudited(w, fp.Unaudited, width)
	writeRefused(w, fp.Refused, width)
	writeChangeGroups(w, fp.Plans, fp.clusters, width)
	remediate.RenderPlan(w, fp.Plans, remediate.PlanOptions{Applying: true, Width: width, Unaudited: len(fp.Unaudited), Refused: len(fp.Refused)})
	for _, s := range fp.Skipped {
		fmt.Fprintf(w, "%s: skipped %s %s → %s: %s\n", termsafe.Line(s.Host), s.Change.Kind, termsafe.Line(s.Change.Target), termsafe.Line(s.Change.To), termsafe.Line(s.Reason))
	}
	if fp.Changes == 0 && remediate.Summarize(fp.Plans).Changes > 0 { // the plan's summary line was left out
		fmt.Fprintf(w, "no change kaudit applies on %s; nothing changed\n", words.Count(len(fp.Plans), "audited host", "audited hosts"))
	}
}

// What is what Apply will do: "N changes on M hosts".
func (fp *FixPlan) What() string {
	return fmt.Sprintf("%s on %s", words.Count(fp.Changes, "change", "changes"), words.Count(fp.Changing, "host", "hosts"))
}

// writeApplying is the line fix --apply writes as run cfg starts on fp.
func writeApplying(w io.Writer, fp *FixPlan, cfg ApplyConfig) {
	fmt.Fprintf(w, "run %s: applying %s (journal %s)\n", cfg.RunID, fp.What(), cfg.JournalPath)
}

// writeUndo is where run cfg's journal is and the command that undoes
// the run: kaudit rollback with target, the arguments that select the
// run's hosts (FixJob.Rollback), each word quoted for a shell.
func writeUndo(w io.Writer, cfg ApplyConfig, target []string) {
	words := make([]string, len(target))
	for i, a := range target {
		words[i] = remote.QuoteWord(a)
	}
	fmt.Fprintf(w, "journal: %s\nundo: kaudit rollback %s --run %s\n", cfg.JournalPath, strings.Join(words, " "), cfg.RunID)
}

// writeRun writes one block per host of a run (status, each change
// from → to, backups, the error), then the tally and restart notes.
func writeRun(w io.Writer, j *remediate.Journal) {
	var verified, restart, restarted int
	for _, hj := range j.Hosts {
		if len(hj.Changes) == 0 {
			continue
		}
		writeHostRun(w, hj)
		if hj.Status != remediate.StatusVerified {
			continue
		}
		verified++
		if !remediate.NeedsRestart(hj.Changes) {
			continue
		}
		restart++
		if r := hj.Restart; r != nil && r.InForce && r.Error == "" { // a refused restart is never in force
			restarted++
		}
	}
	fmt.Fprintf(w, "%s changed and verified, %d of them %s a broker restart%s\n", words.Count(verified, "host", "hosts"), restart,
		map[bool]string{true: "needs", false: "need"}[restart == 1], restartTally(restart, restarted))
	writeResidual(w, j)
}

// restartTally says, after the count of hosts whose changes need a
// restart, how many kaudit restarted (--restart) and what the others need.
func restartTally(restart, restarted int) string {
	switch {
	case restart == 0:
		return ""
	case restarted == restart:
		return ": restarted, the changes in force"
	case restarted > 0:
		return fmt.Sprintf(": %d restarted, the changes in force; %d not (%s)", restarted, restart-restarted, remediate.RestartByHand)
	}
	return " (" + remediate.RestartByHand + ")"
}

// writeResidual says, after the tally, on which verified hosts the talk's
// failure is still possible and on which only the kernel is left: values
// that read back are not the risk gone (remediate.Residual).
func writeResidual(w io.Writer, j *remediate.Journal) {
	var open, closed, pending []string
	for _, hj := range j.Hosts {
		r := hj.Residual
		switch {
		case r == nil || !r.KernelOpen:
			continue
		case r.CookiePathOpen:
			open = append(open, termsafe.Line(hj.Host))
		default:
			closed = append(closed, termsafe.Line(hj.Host))
		}
		if r.RestartPending {
			pending = append(pending, termsafe.Line(hj.Host))
		}
	}
	if len(open) > 0 {
		fmt.Fprintf(w, "still exposed: the SYN-cookie path is open on a kernel without commit 909172a on %s (%s): the talk's failure remains possible there; turn cookies off (net.ipv4.tcp_syncookies=0, kaudit explain kernel-synack-wscale) or upgrade the kernel\n",
			words.Count(len(open), "host", "hosts"), strings.Join(open, ", "))
	}
	if len(closed) > 0 {
		fmt.Fprintf(w, "kernel still affected on %s (%s): the SYN-cookie path is closed (tcp_syncookies=0), the kernel upgrade is still open\n",
			words.Count(len(closed), "host", "hosts"), strings.Join(closed, ", "))
	}
	if len(pending) > 0 && len(open)+len(closed) > 0 {
		fmt.Fprintf(w, "listen backlog pending a broker restart on %s (%s): until then a reconnect storm beyond the old backlog drops SYNs\n",
			words.Count(len(pending), "host", "hosts"), strings.Join(pending, ", "))
	}
}

func writeHostRun(w io.Writer, hj remediate.HostJournal) {
	fmt.Fprintf(w, "%s: %s\n", termsafe.Line(hj.Host), hj.Status)
	for _, c := range hj.Changes {
		from := c.From
		if from == "" {
			from = "(unset)"
		}
		fmt.Fprintf(w, "  %s %s: %s → %s", c.Kind, termsafe.Line(c.Target), termsafe.Line(from), termsafe.Line(c.To))
		if c.Persist && !c.Runtime {
			fmt.Fprint(w, " (persist only)")
		}
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
		if b.Changed == remediate.ChangedNo {
			state += "; not changed by this run"
		}
		fmt.Fprintf(w, "  backup %s (%s)\n", termsafe.Line(b.Path), termsafe.Line(state))
	}
	if hj.Error != "" {
		fmt.Fprintf(w, "  %s\n", termsafe.Block(hj.Error))
	}
}

// writeRollback writes one line per host of a rollback and returns how
// many hosts failed; writeRollbackTally writes the closing line.
func writeRollback(w io.Writer, res []apply.RollbackResult) (failed int) {
	for _, r := range res {
		if r.Err != nil {
			failed++
			fmt.Fprintf(w, "%s: rollback FAILED: %s\n", termsafe.Line(r.Host), termsafe.Block(r.Err.Error()))
			continue
		}
		if r.Nothing {
			fmt.Fprintf(w, "%s: nothing to roll back: %s\n", termsafe.Line(r.Host), termsafe.Line(r.Detail))
			continue
		}
		fmt.Fprintf(w, "%s: rolled back (%s)\n", termsafe.Line(r.Host), termsafe.Line(cmp.Or(r.Detail, "nothing restored")))
		for _, k := range r.Kept {
			fmt.Fprintf(w, "  kept: %s\n", termsafe.Line(k))
		}
		for _, k := range r.Refused {
			fmt.Fprintf(w, "  REFUSED: %s\n", termsafe.Line(k))
		}
		if len(r.Refused) > 0 {
			failed++
		}
	}
	return failed
}

// writeRollbackTally is a rollback's last line.
func writeRollbackTally(w io.Writer, runID, journalPath string, hosts, failed int) {
	fmt.Fprintf(w, "run %s: %d host(s) rolled back, %d failed; journal %s\n", runID, hosts-failed, failed, journalPath)
}
