package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/audit/trust"
)

// trustOptions are the flags of kaudit trust.
type trustOptions struct {
	limit string
	yes   bool
	fetch trust.Options // --concurrency, --connect-timeout
	ssh   sshConfigOpts
}

func trustCommand(e env) *cli.Command {
	o := &trustOptions{}
	return &cli.Command{
		Name:        "trust",
		Usage:       "fetch, show and record the host keys of an inventory's hosts (known_hosts)",
		ArgsUsage:   "INVENTORY",
		Description: help("trust"),
		Flags: flags(limitFlag(&o.limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "record new keys without asking (automation: check the fingerprints another way)", Destination: &o.yes},
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: 20, Usage: "hosts contacted at once", Destination: &o.fetch.Concurrency},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &o.fetch.ConnectTimeout},
		}, o.ssh.flags()),
		Action: func(c *cli.Context) error { return runTrust(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runTrust(ctx context.Context, o trustOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("trust needs exactly one INVENTORY argument")
	}
	if o.fetch.Concurrency < 1 || o.fetch.ConnectTimeout <= 0 {
		return usageErr("--concurrency must be at least 1 and --connect-timeout positive")
	}
	_, hosts, err := loadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	runner, err := connect(e, hosts, o.ssh, becomeOpts{})
	if err != nil {
		return err
	}
	defer runner.Close()
	e.fitOpenFiles(&o.fetch.Concurrency)
	entries := trust.Fetch(ctx, hosts, runner, o.fetch)
	trust.Write(e.stdout, entries)
	if ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: nothing was written")}
	}
	stop() // Ctrl-C at the question ends kaudit at once: nothing is written before the answer
	if n := trust.Pending(entries); n > 0 {
		ok, err := ask(e, o.yes, fmt.Sprintf("\nRecord these %d new host keys in known_hosts?", n),
			usageErr("%d new host keys and no terminal to confirm on: nothing was written; check the fingerprints above and run again with --yes", n))
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{code: ExitFindings, err: fmt.Errorf("nothing was written (%d new keys not confirmed)", n)}
		}
		entries = trust.Record(entries, runner.HostKeys)
		fmt.Fprintf(e.stdout, "\nrecorded %d of %d new keys\n", trust.Count(entries, trust.Recorded), n)
	}
	for _, msg := range trust.ChangedWarnings(entries) {
		fmt.Fprintf(e.stderr, "kaudit: error: %s\n", msg)
	}
	if bad := trust.Untrusted(entries); bad > 0 {
		return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d host keys are not trusted (see above)", bad, len(entries))}
	}
	return nil
}
