package pipeline

import (
	"github.com/kaudit/kaudit/report"
)

// rerender is kaudit report, and merge, once the report is loaded (or
// merged): judged at failOn (the scan's threshold unless given), waived,
// summarized, emitted.
func rerender(c Console, r *report.Report, f OutputFlags, failOnSet bool) error {
	o, err := f.Check(r.FailOnFor(f.FailOn, failOnSet), c.Stdout)
	if err != nil {
		return err
	}
	r.FailOn = string(o.FailOn)
	waive(c, r, o.waivers)
	report.Summarize(r)
	return emit(c.Stdout, r, o)
}

// RerenderFile is kaudit report: rerender of the JSON report at path.
func RerenderFile(c Console, path string, f OutputFlags, failOnSet bool) error {
	r, err := report.Load(path)
	if err != nil {
		return err
	}
	return rerender(c, r, f, failOnSet)
}
