package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
)

// trustOptions are the flags of kaudit trust.
type trustOptions struct {
	limit string
	conn  connectOpts
	job   pipeline.TrustJob // Yes, Options (--concurrency, --connect-timeout)
}

func trustCommand(e env) *cli.Command {
	o := &trustOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "trust",
		Usage:       "fetch, show and record the host keys of an inventory's hosts (known_hosts)",
		ArgsUsage:   "INVENTORY",
		Description: help("trust"),
		Flags: flags(limitFlag(&o.limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
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
	return pipeline.Trust(ctx, e, o.conn.fleet(e, args[0], o.limit), o.job)
}
