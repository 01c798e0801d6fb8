package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
)

// trustOptions are the flags of kaudit trust.
type trustOptions struct {
	conn connectOpts
	job  pipeline.TrustJob // Limit, Yes, Options (--concurrency, --connect-timeout)
}

func trustCommand(e env) *cli.Command {
	o := &trustOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "trust",
		Usage:       "fetch, show and record the host keys of an inventory's hosts (known_hosts)",
		ArgsUsage:   "INVENTORY",
		Description: help("trust"),
		Flags: flags(limitFlag(&j.Limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "record new keys without asking (automation: check the fingerprints another way)", Destination: &j.Yes},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 20, Usage: "hosts contacted at once", Destination: &j.Options.Concurrency},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &j.Options.ConnectTimeout},
		}, o.conn.flags(false)),
		Action: func(c *cli.Context) error { return runTrust(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runTrust(ctx context.Context, o trustOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("trust needs exactly one INVENTORY argument")
	}
	if err := pipeline.CheckTrust(o.job.Options); err != nil {
		return err
	}
	var err error
	o.job.Inventory = args[0]
	if o.job.Connect, err = o.conn.config(e); err != nil {
		return err
	}
	return pipeline.Trust(ctx, e, o.job)
}
