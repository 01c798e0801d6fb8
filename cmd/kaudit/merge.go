package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
)

// mergeCommand joins the JSON reports of a sharded scan into one.
func mergeCommand(e env) *cli.Command {
	o := &reportOptions{output: outputOpts{defaultFormat: "json", formatUsage: "report format: json (default), or any of kaudit report's"}}
	return &cli.Command{
		Name:        "merge",
		Usage:       "join the JSON reports of a sharded scan (kaudit scan --shard K/N): kaudit merge shard-*.json -o fleet.json",
		ArgsUsage:   "SHARD.json...",
		Description: helpWithExit("merge"),
		Flags:       o.output.flags(),
		Action: func(c *cli.Context) error {
			o.failOnSet = c.IsSet("fail-on")
			return runMerge(c.Context, *o, c.Args().Slice(), e)
		},
	}
}

func runMerge(_ context.Context, o reportOptions, args []string, e env) error {
	if len(args) < 1 {
		return located.Hint(usageErr("merge needs the JSON reports of the shards"), "kaudit merge shard-0.json shard-1.json … -o fleet.json")
	}
	return pipeline.Merge(e, args, o.output.f, o.failOnSet) // the fleet rules see the hosts of every shard
}
