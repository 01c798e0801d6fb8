package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/remediate/apply"
)

// rollbackOptions are the flags of kaudit rollback.
type rollbackOptions struct {
	run        string
	yes        bool
	journalDir string
	fromHosts  bool
	limit      string
	ssh        sshConfigOpts
	cfg        pipeline.RollbackConfig // Concurrency, Timeout, ConnectTimeout, Force
}

func rollbackCommand(e env) *cli.Command {
	o := &rollbackOptions{}
	return &cli.Command{
		Name:        "rollback",
		Usage:       "undo a fix --apply run on every host it changed, from the backups kept on the hosts",
		ArgsUsage:   "INVENTORY",
		Description: help("rollback"),
		Flags: flags([]cli.Flag{
			&cli.StringFlag{Name: "run", Usage: "the `RUN-ID` printed by fix --apply", Destination: &o.run},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation", Destination: &o.yes},
			&cli.StringFlag{Name: "journal-dir", Usage: "where fix --apply wrote the journal (default ~/.local/state/kaudit/runs)", Destination: &o.journalDir},
			&cli.BoolFlag{Name: "force", Usage: "also restore files and running values that changed since the run (by default they are kept and listed)", Destination: &o.cfg.Force},
			&cli.BoolFlag{Name: "from-hosts", Usage: "the local journal is lost: rebuild it from the manifests the run left on the hosts (/var/lib/kaudit/runs/RUN-ID/manifest)", Destination: &o.fromHosts},
		}, limitFlag(&o.limit, "only hosts matching `PATTERN` (as for scan)"), []cli.Flag{
			&cli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Value: pipeline.DefaultRollbackConcurrency, Usage: "hosts restored at once", Destination: &o.cfg.Concurrency},
			&cli.DurationFlag{Name: "timeout", Value: pipeline.DefaultRollbackTimeout, Usage: "per-host deadline", Destination: &o.cfg.Timeout},
			&cli.DurationFlag{Name: "connect-timeout", Value: transport.DefaultConnectTimeout, Usage: "per-host TCP connect + SSH handshake deadline", Destination: &o.cfg.ConnectTimeout},
		}, o.ssh.flags()),
		Action: func(c *cli.Context) error { return runRollback(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runRollback(ctx context.Context, o rollbackOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("rollback needs exactly one INVENTORY argument")
	}
	if !remediate.ValidRunID(o.run) {
		return usageErr("rollback needs --run RUN-ID (as printed by fix --apply), got %q", o.run)
	}
	if cfg := o.cfg; cfg.Concurrency < 1 || cfg.Timeout <= 0 || cfg.ConnectTimeout <= 0 {
		return usageErr("--concurrency, --timeout and --connect-timeout must be positive")
	}
	dir, err := journalDir(o.journalDir)
	if err != nil {
		return err
	}
	_, hosts, err := loadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	cfg := o.cfg
	cfg.JournalPath = pipeline.JournalPath(dir, o.run)
	runner, err := connect(e, hosts, o.ssh, becomeOpts{})
	if err != nil {
		return err
	}
	defer runner.Close()
	cfg.Runner = runner
	e.fitOpenFiles(&cfg.Concurrency)
	j, err := loadRun(ctx, e, o, dir, hosts, cfg)
	if err != nil {
		return err
	}
	n := pipeline.RollbackTargets(j, hosts)
	if n == 0 {
		fmt.Fprintf(e.stdout, "run %s changed nothing on the selected hosts: nothing to roll back\n", o.run)
		return nil
	}
	ok, err := confirm(e, o.yes, fmt.Sprintf("roll back run %s on %d hosts?", o.run, n), "rollback")
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	res, err := pipeline.Rollback(ctx, hosts, j, cfg)
	return reportRollback(e, o.run, cfg.JournalPath, res, err)
}

// loadRun is the run's journal: the local one, or with --from-hosts one
// rebuilt from the hosts' manifests (a warning per host not read).
func loadRun(ctx context.Context, e env, o rollbackOptions, dir string, hosts []inventory.Host, cfg pipeline.RollbackConfig) (*remediate.Journal, error) {
	run, err := pipeline.LoadRun(ctx, hosts, o.run, o.fromHosts, cfg)
	if run != nil {
		for _, u := range run.Unread {
			e.warn("%s: cannot read the run's manifest: %v", u.Host, u.Err)
		}
	}
	switch {
	case errors.Is(err, pipeline.ErrJournalExists):
		return nil, usageErr("%s exists: roll back from it (drop --from-hosts)", cfg.JournalPath)
	case errors.Is(err, pipeline.ErrNoJournal):
		return nil, usageErr("no journal for run %s in %s (set --journal-dir, or --from-hosts to rebuild it from the hosts)", o.run, dir)
	case errors.Is(err, pipeline.ErrNoHostRead):
		return nil, &exitError{code: ExitApplyFailed, err: fmt.Errorf("no host could be read: nothing rolled back")}
	case err != nil:
		return nil, usage(err)
	case run.Rebuilt:
		fmt.Fprintf(e.stdout, "journal of run %s rebuilt from %d host(s): %s\n", o.run, len(run.Journal.Hosts), cfg.JournalPath)
	}
	return run.Journal, nil
}

// reportRollback prints one line per host and the run's tally.
func reportRollback(e env, id, jpath string, res []apply.RollbackResult, err error) error {
	failed := pipeline.WriteRollback(e.stdout, res)
	if err != nil {
		e.warn("%v", err)
	}
	pipeline.WriteRollbackTally(e.stdout, id, jpath, len(res), failed)
	if failed > 0 {
		return &exitError{code: ExitApplyFailed, err: fmt.Errorf("%d host(s) could not be rolled back: re-run when they are reachable", failed)}
	}
	return nil
}
