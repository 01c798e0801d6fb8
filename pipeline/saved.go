package pipeline

import (
	"fmt"
	"io"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/waiver"
	"github.com/kaudit/kaudit/whatif"
)

// What the commands on saved JSON scans run (kaudit report, merge, diff,
// whatif, waivers check): no connection, the same verdicts.

// Rerender is kaudit report and merge once the report is loaded (or
// merged): judged at failOn (the scan's threshold unless given), waived,
// summarized, emitted.
func Rerender(c Console, r *report.Report, f OutputFlags, failOnSet bool) error {
	o, err := f.Check(r.FailOnFor(f.FailOn, failOnSet), c.Stdout)
	if err != nil {
		return err
	}
	r.FailOn = string(o.FailOn)
	Waive(c, r, o.waivers)
	report.Summarize(r)
	return Emit(c.Stdout, r, o)
}

// Merge is kaudit merge: the shards' reports joined (report.MergeFiles),
// the fleet rules run again over every shard's hosts, then Rerender
// (which summarizes).
func Merge(c Console, files []string, f OutputFlags, failOnSet bool) error {
	r, err := report.MergeFiles(files)
	if err != nil {
		return err
	}
	FleetPass(r)
	return Rerender(c, r, f, failOnSet)
}

// DiffJob is kaudit diff: two saved scans compared.
type DiffJob struct {
	Old, New       string // the scans' files
	Waivers        string // applied to both first
	Format, Output string // a diff.Formats name; a file instead of stdout
	FailOnNew      bool
}

// Diff loads, waives and compares j's scans and writes the diff. Its
// verdict with FailOnNew is Findings when a host × rule newly fails.
func Diff(c Console, j DiffJob) error {
	if err := OneOf("format", j.Format, diff.Formats()); err != nil {
		return err
	}
	w, err := LoadWaivers(j.Waivers)
	if err != nil {
		return err
	}
	var reps [2]*report.Report
	for i, file := range []string{j.Old, j.New} {
		r, err := report.Load(file)
		if err != nil {
			return err
		}
		Waive(c, r, w)
		report.Summarize(r)
		reps[i] = r
	}
	d := diff.Compare(reps[0], reps[1])
	if err := WriteOutput(c.Stdout, j.Output, func(w io.Writer) error { return diff.Write(w, j.Format, d) }); err != nil {
		return err
	}
	if j.FailOnNew && d.NewlyFailingCount() > 0 {
		return Fail(Findings, "%d host × rule newly failing", d.NewlyFailingCount())
	}
	return nil
}

// WhatIfJob is kaudit whatif: the what-if of a saved scan.
type WhatIfJob struct {
	Scan           string
	Assume         whatif.Assume
	Profile        string // a thresholds file ("" the default profile)
	Format, Output string // a whatif.Formats name; a file instead of stdout
	FailUnsafe     bool
}

// WhatIfFile evaluates and writes j's what-if. Its verdict with
// FailUnsafe is Findings when a cluster is not safe to rolling-restart
// after the upgrade.
func WhatIfFile(c Console, j WhatIfJob) error {
	if err := OneOf("format", j.Format, whatif.Formats()); err != nil {
		return err
	}
	r, err := report.Load(j.Scan)
	if err != nil {
		return err
	}
	prof, err := LoadProfile(j.Profile)
	if err != nil {
		return err
	}
	w, err := whatif.Evaluate(r, j.Assume, func(string) rules.Profile { return prof })
	if err != nil {
		return err
	}
	if err := WriteOutput(c.Stdout, j.Output, func(out io.Writer) error { return whatif.Write(out, j.Format, w) }); err != nil {
		return err
	}
	if cluster, unsafe := w.UnsafeAfter(); j.FailUnsafe && unsafe {
		return Fail(Findings, "cluster %s is not safe to rolling-restart after the upgrade", cluster)
	}
	return nil
}

// CheckWaivers is kaudit waivers check: the waivers of file listed, those
// expiring within soon days flagged. Its verdict is Findings when any has
// expired.
func CheckWaivers(c Console, file string, soon int) error {
	w, err := waiver.Load(file)
	if err != nil {
		return err
	}
	if expired := waiver.WriteCheck(c.Stdout, w, c.Now(), soon); expired > 0 {
		return &Failure{Verdict: Findings, Err: located.Hint(fmt.Errorf("%d waiver(s) expired", expired), "renew them with a new date or fix the findings")}
	}
	return nil
}
