package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/simhost"
	"github.com/kaudit/kaudit/pipeline"
)

// demoOptions are the flags of kaudit demo: scan's, but no --limit (the
// fleet is fixed).
type demoOptions struct{ reportOpts }

func demoCommand(e env) *cli.Command {
	o := &demoOptions{newReportOpts(e)}
	return &cli.Command{
		Name:        "demo",
		Usage:       "scan a simulated fleet of 9 broker hosts and a producer over real SSH on 127.0.0.1 (no root, nothing to install)",
		Description: helpWithExit("demo"),
		Flags:       o.reportOpts.flags(),
		Action:      func(c *cli.Context) error { return runDemo(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runDemo(ctx context.Context, o demoOptions, _ []string, e env) error {
	eo, cfg, err := checkScan(o.output, o.fanout)
	if err != nil {
		return err
	}
	cfg.Probe = demoProbe()
	dir, err := os.MkdirTemp("", "kaudit-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fleet, err := simhost.Start(dir, simhost.DemoFleet(), "kafka-down-08")
	if err != nil {
		return fmt.Errorf("demo: cannot start the simulated fleet: %w", err)
	}
	defer fleet.Close()
	r, err := scanAndEmit(ctx, e, o.reportOpts, eo, cfg, fleet.Hosts, "demo (simulated fleet on 127.0.0.1)", "")
	if r != nil && eo.format == "table" && eo.output == "" {
		pipeline.WriteDemoPlan(e.stdout, r, eo.term.Verbose, eo.term.Width)
	}
	return err
}
