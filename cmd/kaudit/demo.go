package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

// demoCommand scans the simulated fleet: scan's flags, but no --limit
// (the fleet is fixed).
func demoCommand(e env) *cli.Command {
	o := &reportOpts{}
	return &cli.Command{
		Name:        "demo",
		Usage:       "scan a simulated fleet of 9 broker hosts and a producer over real SSH on 127.0.0.1 (no root, nothing to install)",
		Description: helpWithExit("demo"),
		Flags:       o.flags(),
		Action:      func(c *cli.Context) error { return runDemo(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runDemo(ctx context.Context, o reportOpts, _ []string, e env) error {
	j, err := o.job(e)
	if err != nil {
		return err
	}
	return pipeline.Demo(ctx, e, j)
}
