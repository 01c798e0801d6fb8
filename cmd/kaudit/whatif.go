package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/rules"
)

// whatifOptions are the flags of kaudit whatif.
type whatifOptions struct {
	assume whatIfOpts
	job    pipeline.WhatIfJob
}

// whatifCommand runs the what-if on a saved JSON scan.
func whatifCommand(e env) *cli.Command {
	o := &whatifOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "whatif",
		Usage:       "pre-upgrade what-if on a JSON scan: which findings a kernel / Kafka upgrade would fix or introduce, and is a rolling restart safe",
		ArgsUsage:   "SCAN.json",
		Description: strings.Replace(help("whatif"), "{{restart-gate-rules}}", fmt.Sprint(rules.RestartGateRules()), 1),
		Flags: flags(o.assume.flags(), []cli.Flag{
			&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (as for scan)", Destination: &j.Profile},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json", Destination: &j.Format},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout", Destination: &j.Output},
			&cli.BoolFlag{Name: "fail-unsafe", Usage: "exit 1 when a cluster is not safe to rolling-restart after the upgrade", Destination: &j.FailUnsafe},
		}),
		Action: func(c *cli.Context) error { return runWhatif(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runWhatif(_ context.Context, o whatifOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("whatif needs exactly one SCAN.json argument (written by kaudit scan -f json)")
	}
	o.job.Scan, o.job.Assume = args[0], o.assume.assume()
	return pipeline.WhatIfFile(e, o.job)
}
