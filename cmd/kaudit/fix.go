package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/rules"
)

// fixOptions are the flags of kaudit fix; --batch, --max-failures,
// --runtime-only-ok, --apply and --yes are bound to the library's fields.
type fixOptions struct {
	limit, rules string
	fanout       fanoutOpts
	probe        probeOpts
	conn         connectOpts
	cluster      clusterOpts
	layout       termui.Layout // --width
	quiet        bool
	rollout      rolloutOpts
	accept       cli.StringSlice // --accept-cluster-mismatch
	job          pipeline.FixJob
}

func fixCommand(e env) *cli.Command {
	o := &fixOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "fix",
		Usage:       "scan, then print the remediation plan per host; --apply carries it out",
		ArgsUsage:   "[INVENTORY]",
		Description: help("fix"),
		Flags: flags(limitFlag(&o.limit, scanLimitUsage), o.fanout.flags(), []cli.Flag{
			&cli.StringFlag{Name: "rules", Usage: "only plan fixes for these comma-separated rule `IDS`", Destination: &o.rules},
			&cli.BoolFlag{Name: "apply", Usage: "apply the plan (sysctl, server.properties and NIC changes)", Destination: &j.Apply},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --apply: do not ask for confirmation", Destination: &j.Yes},
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "with --apply: clusters changed at once after the first (canary) host, never two brokers of one cluster", Destination: &j.Config.Batch},
			&cli.StringFlag{Name: "resume", Usage: "with --apply: continue the run `RUN-ID` a rollout's gate stopped (hosts it changed are not changed again)", Destination: &j.Rollout.Resume},
			&cli.IntFlag{Name: "max-failures", Value: 0, Usage: "with --apply: start no further batch once more than `N` hosts failed", Destination: &j.Config.MaxFailures},
			&cli.StringFlag{Name: "journal-dir", Usage: "with --apply: where the run journal is written (default ~/.local/state/kaudit/runs)", Destination: &j.JournalDir},
			&cli.StringSliceFlag{Name: "accept-cluster-mismatch", Usage: "with --bootstrap and an inventory: change inventory `HOST` although its meta.properties names another cluster (repeat for each host; a host named only by the cluster must be proven, always)", Destination: &o.accept},
			&cli.BoolFlag{Name: "runtime-only-ok", Usage: "plan a change whose running value can be set but whose persistence cannot (no udev rules dir, read-only /etc/sysctl.d) as runtime only, instead of listing it as impossible on that host", Destination: &j.Selector.RuntimeOnlyOK},
		}, o.rollout.flags(&j.Rollout, false), o.probe.flags(true), o.conn.flags(true), o.cluster.flags(), layoutFlags(&o.layout, &o.quiet)),
		Action: func(c *cli.Context) error { return runFix(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runFix(ctx context.Context, o fixOptions, args []string, e env) error {
	inv, src, err := o.cluster.fleetArgs("fix", args, "to plan for the cluster's brokers")
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if err := o.job.Rollout.CheckRestart(src != nil); err != nil {
		return err
	}
	cfg, err := o.fanout.config(rules.High) // the plan is printed, not a report
	if err != nil {
		return err
	}
	if o.job.Width, _, err = o.layout.DecideFor(e.Stdout, true); err != nil {
		return err
	}
	if cfg.Probe, err = pipeline.ProbeFor(o.probe.on, o.probe.budget); err != nil {
		return err
	}
	cfg.Cluster = src
	return pipeline.Fix(ctx, e, o.conn.fleet(e, inv, o.limit), cfg, o.quiet, o.job)
}

// check checks fix's flags, and sets the rule selector.
func (o *fixOptions) check() error {
	sel, err := pipeline.ParseSelector(o.rules)
	if err != nil {
		return located.Hint(usageErr("--rules: %v", err), "kaudit rules lists them")
	}
	o.job.Selector.Rules = sel.Rules
	if err := o.rollout.check(&o.job.Rollout); err != nil {
		return err
	}
	o.job.AcceptClusterMismatch = o.accept.Value()
	return o.job.Check()
}
