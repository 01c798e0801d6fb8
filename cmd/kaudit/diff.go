package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

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
		Name:      "diff",
		Usage:     "compare two JSON scans: newly failing / passing / still failing, hosts added / removed, facts changed",
		ArgsUsage: "OLD.json NEW.json",
		Description: "Both files are reports written by `kaudit scan --format json`. Findings are matched by\n" +
			"host name × rule ID. A failure on a host that is new, or was not audited in OLD, counts as\n" +
			"newly failing. Facts compared: audit state, kernel release, distribution, Kafka version and\n" +
			"every gathered sysctl.\n\n" +
			"EXIT STATUS:\n" +
			"   0    compared (whatever changed), or nothing newly fails with --fail-on-new\n" +
			"   1    --fail-on-new and at least one host × rule newly fails\n" +
			"   2    usage error or a file that is not a kaudit JSON report",
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
	known := false
	for _, f := range diff.Formats {
		known = known || f == o.format
	}
	if !known {
		return usageErr("unknown --format %q (known: %s)", o.format, strings.Join(diff.Formats, ", "))
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
	if err := writeOutput(e.stdout, o.output, func(w io.Writer) error { return diff.Write(w, o.format, d) }); err != nil {
		return err
	}
	if o.failOnNew && d.NewlyFailingCount() > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d host × rule newly failing", d.NewlyFailingCount())}
	}
	return nil
}
