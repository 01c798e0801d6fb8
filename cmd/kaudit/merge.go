package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
)

// mergeCommand joins the JSON reports of a sharded scan into one.
func mergeCommand(e env) *cli.Command {
	o := &reportOptions{output: outputOpts{waivers: waiverOpts{now: e.now}}}
	fl := o.output.flags()
	fl[0] = &cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "json", Usage: "report format: json (default), or any of kaudit report's", Destination: &o.output.format}
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the JSON reports of a sharded scan (kaudit scan --shard K/N): kaudit merge shard-*.json -o fleet.json",
		ArgsUsage: "SHARD.json...",
		Description: "Each SHARD.json is a report written by `kaudit scan --shard K/N -f json`; every K of one N\n" +
			"must be given once, and the reports must come from one inventory, kaudit version and --fail-on.\n" +
			"The merged report lists the hosts by name with scores and the summary recomputed; it equals\n" +
			"the unsharded scan's report but for timings. The exit status is computed as kaudit report\n" +
			"computes it.\n\n" + help("exit"),
		Flags: fl,
		Action: func(c *cli.Context) error {
			o.failOnSet = c.IsSet("fail-on")
			return runMerge(c.Context, *o, c.Args().Slice(), e)
		},
	}
}

func runMerge(_ context.Context, o reportOptions, args []string, e env) error {
	if len(args) < 1 {
		return usageErr("merge needs the JSON reports of the shards (kaudit merge shard-0.json shard-1.json … -o fleet.json)")
	}
	var srcs []report.Source
	for _, p := range args {
		r, err := report.Load(p)
		if err != nil {
			return usage(err)
		}
		srcs = append(srcs, report.Source{Path: p, Report: r})
	}
	r, err := report.Merge(srcs)
	if err != nil {
		return usage(err)
	}
	pipeline.FleetPass(r) // the fleet rules see the hosts of every shard
	report.Summarize(r)
	return renderReport(o, r, e)
}
