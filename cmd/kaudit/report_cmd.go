package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// reportOptions are the flags of kaudit report.
type reportOptions struct {
	output    outputOpts
	failOnSet bool // --fail-on given: it wins over the threshold the scan recorded
}

// reportCommand re-renders a JSON scan (kaudit scan -f json) in any
// registered format without connecting anywhere.
func reportCommand(e env) *cli.Command {
	o := &reportOptions{output: outputOpts{waivers: waiverOpts{now: e.now}}}
	return &cli.Command{
		Name:        "report",
		Usage:       "re-render an earlier JSON scan in any format (no SSH): kaudit report scan.json -f html -o report.html",
		ArgsUsage:   "SCAN.json",
		Description: helpWithExit("report"),
		Flags:       o.output.flags(),
		Action: func(c *cli.Context) error {
			o.failOnSet = c.IsSet("fail-on")
			return runReport(c.Context, *o, c.Args().Slice(), e)
		},
	}
}

func runReport(_ context.Context, o reportOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("report needs exactly one SCAN.json argument (written by kaudit scan -f json)")
	}
	r, err := report.Load(args[0])
	if err != nil {
		return usage(err)
	}
	return renderReport(o, r, e)
}

// renderReport renders a loaded (or merged) report as kaudit report does.
func renderReport(o reportOptions, r *report.Report, e env) error {
	failOn := o.output.failOn
	if _, ok := rules.ParseSeverity(r.FailOn); ok && !o.failOnSet {
		failOn = r.FailOn
	}
	eo, err := o.output.check(failOn)
	if err != nil {
		return err
	}
	r.FailOn = string(eo.failOn)
	if err := o.output.waivers.apply(e, r); err != nil {
		return err
	}
	report.Summarize(r)
	return emit(e.stdout, r, eo)
}
