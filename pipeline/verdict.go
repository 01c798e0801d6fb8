package pipeline

import (
	"fmt"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Verdict is what a report means for the run, decided once for every
// command that prints one (scan, probe, demo, report, merge), and how
// any other command ended (a *Failure carries it); the CLI maps each to
// its exit code.
type Verdict int

const (
	Pass        Verdict = iota // nothing at or above the threshold fails, every host audited
	Unaudited                  // some hosts could not be audited; nothing reached the threshold
	Findings                   // a finding at or above the threshold fails (or is unknown, when asked)
	Interrupted                // the scan was interrupted: the report holds what was gathered
	NotApplied                 // fix --apply / rollback: a host was not changed or restored as planned
)

// judge is r's verdict at threshold failOn, with what to tell the person
// ("" when the report says it all). With failOnUnknown, an unknown finding
// at or above the threshold counts as failing. Failing findings win over
// unaudited hosts.
func judge(r *report.Report, failOn rules.Severity, failOnUnknown bool) (Verdict, string) {
	worstUnknown := r.Worst(rules.Unknown)
	switch {
	case r.Interrupted:
		return Interrupted, fmt.Sprintf("interrupted: %d of %d hosts audited", r.Summary.Audited, r.Summary.Hosts)
	case r.WorstFailure() != "" && r.WorstFailure().Rank() >= failOn.Rank():
		return Findings, ""
	case failOnUnknown && worstUnknown != "" && worstUnknown.Rank() >= failOn.Rank():
		return Findings, fmt.Sprintf("%s finding(s) could not be proven safe (--fail-on-unknown)", worstUnknown)
	case r.Summary.Unreachable > 0:
		return Unaudited, ""
	}
	return Pass, ""
}
