package pipeline

import (
	"io"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
)

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
	if err := oneOf("format", j.Format, diff.Formats()); err != nil {
		return err
	}
	w, err := loadWaivers(j.Waivers)
	if err != nil {
		return err
	}
	var reps [2]*report.Report
	for i, file := range []string{j.Old, j.New} {
		r, err := report.Load(file)
		if err != nil {
			return err
		}
		waive(c, r, w)
		report.Summarize(r)
		reps[i] = r
	}
	d := diff.Compare(reps[0], reps[1])
	if err := writeOutput(c.Stdout, j.Output, func(w io.Writer) error { return diff.Write(w, j.Format, d) }); err != nil {
		return err
	}
	if j.FailOnNew && d.NewlyFailingCount() > 0 {
		return fail(Findings, "%d host × rule newly failing", d.NewlyFailingCount())
	}
	return nil
}
