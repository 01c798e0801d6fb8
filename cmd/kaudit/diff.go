package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report/diff"
)

func diffCommand(e env) *cli.Command {
	j := &pipeline.DiffJob{}
	return &cli.Command{
		Name:        "diff",
		Usage:       "compare two JSON scans: newly failing / passing / still failing, hosts added / removed, fact changes",
		ArgsUsage:   "OLD.json NEW.json",
		Description: help("diff"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "diff format: " + strings.Join(diff.Formats(), ", "), Destination: &j.Format},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the diff to `FILE` instead of stdout", Destination: &j.Output},
			&cli.BoolFlag{Name: "fail-on-new", Usage: "exit 1 when any host × rule newly fails", Destination: &j.FailOnNew},
			&cli.StringFlag{Name: waiversFlagName, Usage: "apply the waiver `FILE` to both scans first (waived findings are not failing)", Destination: &j.Waivers},
		},
		Action: func(c *cli.Context) error { return runDiff(c.Context, *j, c.Args().Slice(), e) },
	}
}

func runDiff(_ context.Context, j pipeline.DiffJob, args []string, e env) error {
	if len(args) != 2 {
		return usageErr("diff needs two arguments: OLD.json NEW.json")
	}
	j.Old, j.New = args[0], args[1]
	return pipeline.Diff(e, j)
}
