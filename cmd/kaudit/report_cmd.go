package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
)

// reportOptions are the flags of kaudit report (and merge).
type reportOptions struct {
	output    outputOpts
	failOnSet bool // --fail-on given: it wins over the threshold the scan recorded
}

// reportCommand re-renders a JSON scan (kaudit scan -f json) in any
// registered format without connecting anywhere.
func reportCommand(e env) *cli.Command {
	o := &reportOptions{}
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
		return err
	}
	return pipeline.Rerender(e, r, o.output.f, o.failOnSet)
}
