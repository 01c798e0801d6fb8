package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// reportCommand re-renders a JSON scan (kaudit scan -f json) in any
// registered format without connecting anywhere.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-render an earlier JSON scan in any format (no SSH): kaudit report scan.json -f html -o report.html",
		ArgsUsage: "SCAN.json",
		Description: "SCAN.json is a report written by `kaudit scan --format json`. Scores and the summary are\n" +
			"recomputed from its findings (after --waivers, if given). The exit status is computed as\n" +
			"scan computes it: --fail-on when given, else the threshold the scan recorded (fail_on),\n" +
			"else high; 3 when the scan had unaudited hosts; 130 when the scan was interrupted.\n\n" + exitHelp,
		Flags: withWaiversFlag(outputFlags()),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("report needs exactly one SCAN.json argument (written by kaudit scan -f json)")
			}
			r, err := report.Load(c.Args().First())
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			opts, err := reportOptions(c, r)
			if err != nil {
				return err
			}
			if err := applyWaiversFlag(c, r); err != nil {
				return err
			}
			report.Summarize(r)
			return emit(c.App.Writer, r, opts)
		},
	}
}

// reportOptions reads the output flags of a command that renders an
// existing report (no fan-out flags). An explicit --fail-on wins over the
// threshold recorded in the report.
func reportOptions(c *cli.Context, r *report.Report) (options, error) {
	failOn := c.String("fail-on")
	if !c.IsSet("fail-on") {
		if _, ok := rules.ParseSeverity(r.FailOn); ok {
			failOn = r.FailOn
		}
	}
	o, err := outputOptions(c, failOn)
	if err == nil {
		r.FailOn = string(o.failOn)
	}
	return o, err
}
