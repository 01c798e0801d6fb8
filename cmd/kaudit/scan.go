package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

// scanOptions are the flags of kaudit scan (and probe).
type scanOptions struct {
	limit, shard string
	probe        probeOpts
	conn         connectOpts
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
		ArgsUsage:   "INVENTORY",
		Description: helpWithExit("scan"),
		Flags:       o.flags(true),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// probeCommand is scan with the probe always on.
func probeCommand(e env) *cli.Command {
	o := &scanOptions{probe: probeOpts{on: true}}
	return &cli.Command{
		Name:        "probe",
		Usage:       "audit every host like scan, and settle the SYN-cookie kernel bug by observation on each",
		ArgsUsage:   "INVENTORY",
		Description: helpWithExit("probe"),
		Flags:       o.flags(false),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// flags are scan's (withProbeSwitch) or probe's flags.
func (o *scanOptions) flags(withProbeSwitch bool) []cli.Flag {
	shard := &cli.StringFlag{Name: "shard", Destination: &o.shard,
		Usage: "audit only shard `K/N` of the selected hosts (K from 0, e.g. \"$JOB_COMPLETION_INDEX/3\"); " +
			"a host's shard depends on its name alone; join the reports with kaudit merge"}
	return flags(limitFlag(&o.limit, scanLimitUsage), []cli.Flag{shard}, o.reportOpts.flags(), o.probe.flags(withProbeSwitch), o.conn.flags(true))
}

func runScan(ctx context.Context, o scanOptions, args []string, e env) error {
	j, err := o.job(e)
	if err != nil {
		return err
	}
	if j.Config.Probe, err = pipeline.ProbeFor(o.probe.on, o.probe.budget); err != nil {
		return err
	}
	if len(args) != 1 {
		return usageErr("scan needs exactly one INVENTORY argument (see inventory.example.yaml)")
	}
	inv, hosts, err := pipeline.LoadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	j.Config.ClientsGroup, j.Inventory = pipeline.ClientsGroup(j.Config.ClientsGroup, inv), inv.Path
	if j.Hosts, j.Shard, err = pipeline.SelectShard(hosts, o.shard); err != nil {
		return err
	}
	runner, err := o.conn.connect(e, j.Hosts)
	if err != nil {
		return err
	}
	defer runner.Close()
	j.Config.Runner = runner
	j.Config.Concurrency = pipeline.FitOpenFiles(e, j.Config.Concurrency)
	_, err = pipeline.ScanReport(ctx, e, j)
	return err
}

// demoCommand scans the simulated fleet: scan's flags, but no --limit
// (the fleet is fixed).
func demoCommand(e env) *cli.Command {
	o := &reportOpts{}
	return &cli.Command{
		Name:        "demo",
		Usage:       "scan a simulated fleet of 9 broker hosts and a producer over real SSH on 127.0.0.1 (no root, nothing to install)",
		Description: helpWithExit("demo"),
		Flags:       o.flags(),
		Action: func(c *cli.Context) error {
			j, err := o.job(e)
			if err != nil {
				return err
			}
			return pipeline.Demo(c.Context, e, j)
		},
	}
}
