package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/simhost"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
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
		demoPlan(e.stdout, r, eo.term)
	}
	return err
}

// demoPlan prints the fix plan's summary and the command that shows it
// whole; with -v, the whole plan.
func demoPlan(w io.Writer, r *report.Report, t termOptions) {
	if t.Verbose {
		fmt.Fprintln(w, "\nFix plan (kaudit fix INVENTORY; nothing is changed by the demo)")
		pipeline.WritePlan(w, r, remediate.Selector{}, t.Width)
		return
	}
	fmt.Fprintln(w)
	pipeline.WritePlanSummary(w, r, remediate.Selector{}, "(nothing is changed by the demo)",
		"the whole plan: kaudit demo -v · on your fleet: kaudit fix INVENTORY", t.Width)
}
