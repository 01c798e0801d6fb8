package pipeline

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/waiver"
)

// OutputFlags are the flags of a command that prints a report, as the
// person typed them (scan, probe, demo, report, merge).
type OutputFlags struct {
	Format, Path, FailOn string
	FailOnUnknown        bool
	Waivers              string        // a waiver file applied before the report is printed
	Layout               termui.Layout // --width, --color, --no-color
	Verbose, Quiet       bool
	Hosts                bool // list every host of each group of a grouped report
}

// Output is checked OutputFlags: how to render a report and judge it.
type Output struct {
	Format, Path  string // Path "": stdout
	FailOn        rules.Severity
	FailOnUnknown bool
	Waivers       string // the waiver file, loaded by Check (loadWaivers)
	Render        report.Options
	Quiet         bool // no progress bar

	waivers   waiver.Waivers
	waiversOK bool // waivers is the content of Waivers
}

// loadWaivers loads o.Waivers unless Check did: a flow calls it before
// contacting any host, so that a bad file costs no scan.
func (o *Output) loadWaivers() error {
	if o.waiversOK || o.Waivers == "" {
		return nil
	}
	w, err := loadWaivers(o.Waivers)
	if err != nil {
		return err
	}
	o.waivers, o.waiversOK = w, true
	return nil
}

// Check validates the format and the threshold failOn (given: a command
// may take it from elsewhere than FailOn) and decides the layout for
// stdout (Layout.DecideFor); colour is only ever written for the table.
func (f OutputFlags) Check(failOn string, stdout io.Writer) (Output, error) {
	o := Output{Format: f.Format, Path: f.Path, FailOnUnknown: f.FailOnUnknown, Waivers: f.Waivers, Quiet: f.Quiet}
	if err := oneOf("format", f.Format, report.Formats()); err != nil {
		return o, err
	}
	if err := o.loadWaivers(); err != nil {
		return o, err
	}
	sev, ok := rules.ParseSeverity(failOn)
	if !ok {
		return o, fmt.Errorf("unknown --fail-on %q (critical, high, medium, low, info)", failOn)
	}
	o.FailOn = sev
	width, color, err := f.Layout.DecideFor(stdout, f.Path == "")
	o.Render = report.Options{Width: width, Color: color && f.Format == "table", Verbose: f.Verbose, Hosts: f.Hosts}
	return o, err
}

// oneOf checks that --flag is one of the known values.
func oneOf(flag, value string, known []string) error {
	if slices.Contains(known, value) {
		return nil
	}
	return fmt.Errorf("unknown --%s %q (known: %s)", flag, value, strings.Join(known, ", "))
}

// emit renders r as o says (to w, or o.Path) and returns its verdict:
// nil for Pass, else a *Failure.
func emit(w io.Writer, r *report.Report, o Output) error {
	err := writeOutput(w, o.Path, func(w io.Writer) error { return report.Render(w, o.Format, r, o.Render) })
	if err != nil {
		return err
	}
	v, msg := judge(r, o.FailOn, o.FailOnUnknown)
	if v == Pass {
		return nil
	}
	f := &Failure{Verdict: v}
	if msg != "" {
		f.Err = errors.New(msg)
	}
	return f
}
