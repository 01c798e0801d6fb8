package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
)

// kaudit report, and kaudit merge: the shards' reports joined, then
// rendered as kaudit report renders one.

// reportOptions are the flags of kaudit report (and merge).
type reportOptions struct {
	output    outputOpts
	failOnSet bool // --fail-on given: it wins over the threshold the scan recorded
}

// reportCommand re-renders a JSON scan (kaudit scan -f json) in any
// registered format without connecting anywhere.
func reportCommand(e env) *cli.Command {
	o := &reportOptions{}
	return &cli.Command{
		Name:        "report",
		Usage:       "re-render an earlier JSON scan in any format (no SSH): kaudit report scan.json -f html -o report.html",
		ArgsUsage:   "SCAN.json",
		Description: helpWithExit("report"),
		Flags:       o.output.flags(),
		Action: func(c *cli.Context) error {
			o.failOnSet = c.IsSet("fail-on")
			return runReport(c.Context, *o, c.Args().Slice(), e)
		},
	}
}

func runReport(_ context.Context, o reportOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("report needs exactly one SCAN.json argument (written by kaudit scan -f json)")
	}
	return pipeline.RerenderFile(e, args[0], o.output.f, o.failOnSet)
}

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
