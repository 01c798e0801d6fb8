package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/pipeline"
)

// kaudit scan, and kaudit probe: scan with the probe always on.

// scanOptions are the flags of kaudit scan (and probe).
type scanOptions struct {
	limit, shard string
	probe        probeOpts
	conn         connectOpts
	cluster      clusterOpts
	reportOpts
}

// reportOpts are the flags of a command that scans and prints a report:
// scan, probe and demo.
type reportOpts struct {
	fanout fanoutOpts
	output outputOpts
	whatIf whatIfOpts
}

func (o *reportOpts) flags() []cli.Flag {
	return flags(o.fanout.flags(), o.output.flags(), o.whatIf.flags())
}

// job checks the flags and returns the scan to run, its hosts unset.
func (o reportOpts) job(e env) (pipeline.ReportJob, error) {
	j := pipeline.ReportJob{WhatIf: o.whatIf.assume()}
	var err error
	if j.Output, err = o.output.f.Check(o.output.f.FailOn, e.Stdout); err != nil {
		return j, err
	}
	j.Config, err = o.fanout.config(j.Output.FailOn)
	return j, err
}

func scanCommand(e env) *cli.Command {
	o := &scanOptions{}
	return &cli.Command{
		Name:        "scan",
		Usage:       "audit every host of an inventory and report",
		ArgsUsage:   "[INVENTORY]",
		Description: helpWithExit("scan"),
		Flags:       o.flags(true),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// flags are scan's (withProbeSwitch) or probe's flags.
func (o *scanOptions) flags(withProbeSwitch bool) []cli.Flag {
	shard := &cli.StringFlag{Name: "shard", Destination: &o.shard,
		Usage: "audit only shard `K/N` of the selected hosts (K from 0, e.g. \"$JOB_COMPLETION_INDEX/3\"); " +
			"a host's shard depends on its name alone; join the reports with kaudit merge"}
	return flags(limitFlag(&o.limit, scanLimitUsage), []cli.Flag{shard}, o.reportOpts.flags(), o.probe.flags(withProbeSwitch), o.conn.flags(true), o.cluster.flags())
}

func runScan(ctx context.Context, o scanOptions, args []string, e env) error {
	j, err := o.job(e)
	if err != nil {
		return err
	}
	if j.Config.Probe, err = pipeline.ProbeFor(o.probe.on, o.probe.budget); err != nil {
		return err
	}
	inv, src, err := o.cluster.fleetArgs("scan", args, "to audit the cluster's brokers")
	if err != nil {
		return err
	}
	j.Config.Cluster = src
	return pipeline.Scan(ctx, e, o.conn.fleet(e, inv, o.limit), o.shard, j)
}

// probeCommand is scan with the probe always on.
func probeCommand(e env) *cli.Command {
	o := &scanOptions{probe: probeOpts{on: true}}
	return &cli.Command{
		Name:        "probe",
		Usage:       "audit every host like scan, and settle the SYN-cookie kernel bug by observation on each",
		ArgsUsage:   "[INVENTORY]",
		Description: helpWithExit("probe"),
		Flags:       o.flags(false),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// probeOpts are the probe's flags: --probe (scan only) and --probe-budget.
type probeOpts struct {
	on     bool
	budget time.Duration
}

func (o *probeOpts) flags(withSwitch bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.DurationFlag{Name: "probe-budget", Value: probe.DefaultBudget, Usage: "time the probe may take on each host (SSH connect not included; killed after it + 2s)", Destination: &o.budget},
	}
	if withSwitch {
		fs = append([]cli.Flag{&cli.BoolFlag{Name: "probe", Usage: "also run the SYN-cookie window-scale probe on each host (needs root or become: sudo; see kaudit probe --help)", Destination: &o.on}}, fs...)
	}
	return fs
}
