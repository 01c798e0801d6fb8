package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

// waiversCheckOptions are the flags of kaudit waivers check.
type waiversCheckOptions struct{ soon int }

func waiversCommand(e env) *cli.Command {
	o := &waiversCheckOptions{}
	return &cli.Command{
		Name:  "waivers",
		Usage: "work with waiver files (accepted findings with a reason, an owner and an expiry date)",
		Subcommands: []*cli.Command{{
			Name:        "check",
			Usage:       "validate a waiver file and list its waivers; exit 1 when any has expired",
			ArgsUsage:   "FILE",
			Description: help("waivers-check"),
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "soon", Value: 14, Usage: "flag waivers that expire within `DAYS`", Destination: &o.soon},
			},
			Action: func(c *cli.Context) error { return runWaiversCheck(c.Context, *o, c.Args().Slice(), e) },
		}},
	}
}

func runWaiversCheck(_ context.Context, o waiversCheckOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("waivers check needs exactly one FILE argument")
	}
	return pipeline.CheckWaivers(e, args[0], o.soon)
}
