package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
)

// rollbackOptions are the flags of kaudit rollback, bound to the
// library's fields but for --limit and --ssh-config.
type rollbackOptions struct {
	limit   string
	conn    connectOpts
	cluster clusterOpts // without an inventory: the brokers fix found
	rollout rolloutOpts
	job     pipeline.RollbackJob
}

func rollbackCommand(e env) *cli.Command {
	o := &rollbackOptions{}
	j := &o.job
	return &cli.Command{
		Name:        "rollback",
		Usage:       "undo a fix --apply run on every host it changed, from the backups kept on the hosts",
		ArgsUsage:   "[INVENTORY]",
		Description: help("rollback"),
		Flags: flags([]cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "the `RUN-ID` printed by fix --apply", Destination: &j.RunID},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &j.Yes},
			&cli.StringFlag{Name: "journal-dir", Usage: "where fix --apply wrote the journal (default ~/.local/state/kaudit/runs)", Destination: &j.JournalDir},
			&cli.BoolFlag{Name: "force", Usage: "also restore files and running values that changed since the run (by default they are kept and listed)", Destination: &j.Config.Force},
			&cli.BoolFlag{Name: "list", Usage: "list the runs the journal directory and the hosts hold (run, started, per host: the journal's status and the host's backups; each host's lease) instead of rolling one back", Destination: &j.List},
			&cli.BoolFlag{Name: "from-hosts", Usage: "the local journal is lost: rebuild it from the manifests the run left on the hosts (/var/lib/kaudit/runs/RUN-ID/manifest)", Destination: &j.FromHosts},
		}, limitFlag(&o.limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: pipeline.DefaultRollbackConcurrency, Usage: "hosts read at once (their manifests, --list); restores go one broker of a cluster at a time, --batch clusters at once", Destination: &j.Config.Concurrency},
			&cli.DurationFlag{Name: "timeout", Value: pipeline.DefaultRollbackTimeout, Usage: "per-host deadline", Destination: &j.Config.Timeout},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &j.Config.ConnectTimeout},
		}, o.rollout.flags(&j.Rollout, true), o.conn.flags(false), o.cluster.flags()),
		Action: func(c *cli.Context) error { return runRollback(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runRollback(ctx context.Context, o rollbackOptions, args []string, e env) error {
	inv, src, err := o.cluster.fleetArgs("rollback", args, "and the client flags fix was given (its undo line has them)")
	switch {
	case err != nil:
		return err
	case inv != "" && src != nil:
		return located.Hint(usageErr("rollback takes INVENTORY or --bootstrap, not both"), "give what fix was given (its undo line says)")
	}
	if err := o.rollout.check(&o.job.Rollout); err != nil {
		return err
	}
	if err := o.job.Rollout.CheckRestart(src != nil); err != nil {
		return err
	}
	return pipeline.Rollback(ctx, e, o.conn.fleet(e, inv, o.limit), src, o.job)
}
