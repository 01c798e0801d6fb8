package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
)

// diffOptions are the flags of kaudit diff.
type diffOptions struct {
	format, output string
	failOnNew      bool
	waivers        waiverOpts
}

func diffCommand(e env) *cli.Command {
	o := &diffOptions{waivers: waiverOpts{now: e.now}}
	return &cli.Command{
		Name:        "diff",
		Usage:       "compare two JSON scans: newly failing / passing / still failing, hosts added / removed, facts changed",
		ArgsUsage:   "OLD.json NEW.json",
		Description: help("diff"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "diff format: " + strings.Join(diff.Formats, ", "), Destination: &o.format},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the diff to `FILE` instead of stdout", Destination: &o.output},
			&cli.BoolFlag{Name: "fail-on-new", Usage: "exit 1 when any host × rule newly fails", Destination: &o.failOnNew},
			&cli.StringFlag{Name: waiversFlagName, Usage: "apply the waiver `FILE` to both scans first (waived findings are not failing)", Destination: &o.waivers.file},
		},
		Action: func(c *cli.Context) error { return runDiff(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runDiff(_ context.Context, o diffOptions, args []string, e env) error {
	if len(args) != 2 {
		return usageErr("diff needs two arguments: OLD.json NEW.json")
	}
	if err := oneOf("format", o.format, diff.Formats); err != nil {
		return err
	}
	var reps [2]*report.Report
	for i := range reps {
		r, err := report.Load(args[i])
		if err != nil {
			return usage(err)
		}
		if err := o.waivers.apply(e, r); err != nil {
			return err
		}
		report.Summarize(r)
		reps[i] = r
	}
	d := diff.Compare(reps[0], reps[1])
	if err := pipeline.WriteOutput(e.stdout, o.output, func(w io.Writer) error { return diff.Write(w, o.format, d) }); err != nil {
		return err
	}
	if o.failOnNew && d.NewlyFailingCount() > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d host × rule newly failing", d.NewlyFailingCount())}
	}
	return nil
}
