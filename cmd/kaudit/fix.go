package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// fixOptions are the flags of kaudit fix.
type fixOptions struct {
	limit       string
	fanout      fanoutOpts
	become      becomeOpts
	ssh         sshConfigOpts
	rules       string
	apply, yes  bool
	batch       int
	maxFailures int
	journalDir  string
	term        termOpts // --width, --quiet
	// runtimeOnlyOK: plan runtime-only what cannot be persisted on a host.
	runtimeOnlyOK bool
}

func fixCommand(e env) *cli.Command {
	o := &fixOptions{term: termOpts{stdout: e.stdout}}
	return &cli.Command{
		Name:        "fix",
		Usage:       "scan, then print the remediation plan per host; --apply carries it out",
		ArgsUsage:   "INVENTORY",
		Description: help("fix"),
		Flags: flags(limitFlag(&o.limit, scanLimitUsage), o.fanout.flags(), []cli.Flag{
			&cli.StringFlag{Name: "rules", Usage: "only plan fixes for these comma-separated rule `IDS`", Destination: &o.rules},
			&cli.BoolFlag{Name: "apply", Usage: "apply the plan (sysctl, server.properties and NIC changes)", Destination: &o.apply},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --apply: do not ask for confirmation", Destination: &o.yes},
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "with --apply: hosts changed at once after the first (canary) host", Destination: &o.batch},
			&cli.IntFlag{Name: "max-failures", Value: 0, Usage: "with --apply: start no further batch once more than `N` hosts failed", Destination: &o.maxFailures},
			&cli.StringFlag{Name: "journal-dir", Usage: "with --apply: where the run journal is written (default ~/.local/state/kaudit/runs)", Destination: &o.journalDir},
			&cli.BoolFlag{Name: "runtime-only-ok", Usage: "plan a change whose running value can be set but whose persistence cannot (no udev rules dir, read-only /etc/sysctl.d) as runtime only, instead of listing it as impossible on that host", Destination: &o.runtimeOnlyOK},
		}, o.ssh.flags(), o.become.flags(), o.term.layoutFlags()),
		Action: func(c *cli.Context) error { return runFix(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runFix(ctx context.Context, o fixOptions, args []string, e env) error {
	sel, err := fixSelector(o, args)
	if err != nil {
		return err
	}
	cfg, err := o.fanout.config(rules.High) // the plan is printed, not a report
	if err != nil {
		return err
	}
	t, err := o.term.check(true, "plan")
	if err != nil {
		return err
	}
	inv, hosts, err := loadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	cfg.ClientsGroup = clientsGroup(cfg.ClientsGroup, inv)
	var jdir string
	if o.apply {
		// Before connecting anywhere: an apply without a journal
		// directory would be refused later anyway.
		if jdir, err = journalDir(o.journalDir); err != nil {
			return err
		}
	}
	runner, err := connect(e, hosts, o.ssh, o.become)
	if err != nil {
		return err
	}
	defer runner.Close()
	cfg.Runner = runner
	r, err := scan(ctx, e, hosts, cfg, t.Quiet)
	if err != nil {
		return err
	}
	return planOrApply(ctx, e, o, args[0], r, hosts, sel, cfg, jdir, t.Width)
}

// fixSelector checks fix's arguments and flags and returns the rule selector.
func fixSelector(o fixOptions, args []string) (remediate.Selector, error) {
	if len(args) != 1 {
		return remediate.Selector{}, usageErr("fix needs exactly one INVENTORY argument")
	}
	sel, err := selector(o.rules)
	if err != nil {
		return remediate.Selector{}, err
	}
	sel.RuntimeOnlyOK = o.runtimeOnlyOK
	if o.batch < 1 {
		return remediate.Selector{}, usageErr("--batch must be at least 1")
	}
	if o.maxFailures < 0 {
		return remediate.Selector{}, usageErr("--max-failures must be 0 or more")
	}
	return sel, nil
}

// planOrApply prints the plan of a scan, or with --apply carries it out.
func planOrApply(ctx context.Context, e env, o fixOptions, invPath string, r *report.Report, hosts []inventory.Host,
	sel remediate.Selector, cfg pipeline.Config, jdir string, width int) error {
	if r.Interrupted {
		pipeline.WritePlan(e.stdout, r, sel, width)
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while scanning: nothing changed")}
	}
	if !o.apply {
		pipeline.WritePlan(e.stdout, r, sel, width)
		return unauditedErr(r)
	}
	fp := pipeline.PlanFix(r, hosts, sel)
	acfg := pipeline.ApplyConfig{
		Runner: cfg.Runner, Timeout: cfg.Timeout, ConnectTimeout: cfg.ConnectTimeout,
		Batch: o.batch, MaxFailures: o.maxFailures,
	}
	return applyFix(ctx, e, o, invPath, r, fp, acfg, jdir, width)
}

func unauditedErr(r *report.Report) error {
	if r.Summary.Unreachable > 0 {
		return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)}
	}
	return nil
}

// selector is --rules: the fixes of these rules only.
func selector(list string) (remediate.Selector, error) {
	sel, err := pipeline.Selector(list)
	if err != nil {
		return sel, usageErr("--rules: %v (kaudit rules lists them)", err)
	}
	return sel, nil
}

// applyFix shows the plan, asks, and carries it out: fix --apply.
func applyFix(ctx context.Context, e env, o fixOptions, invPath string, r *report.Report, fp *pipeline.FixPlan, cfg pipeline.ApplyConfig, jdir string, width int) error {
	pipeline.WriteFixPlan(e.stdout, fp, width)
	if fp.Changes == 0 {
		return unauditedErr(r)
	}
	ok, err := confirm(e, o.yes, "apply "+fp.What()+"?", "fix --apply")
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	cfg.RunID = remediate.NewRunID(e.now())
	cfg.JournalPath = pipeline.JournalPath(jdir, cfg.RunID)
	cfg.Log = func(line string) { fmt.Fprintf(e.stderr, "kaudit: %s\n", line) }
	sctx, stop := interruptible(ctx)
	defer stop()
	fmt.Fprintf(e.stdout, "run %s: applying %s (journal %s)\n", cfg.RunID, fp.What(), cfg.JournalPath)
	j, err := pipeline.Apply(sctx, fp, cfg)
	if j == nil {
		return usage(err)
	}
	pipeline.WriteRun(e.stdout, j)
	fmt.Fprintf(e.stdout, "journal: %s\nundo: kaudit rollback %s --run %s\n", cfg.JournalPath, invPath, cfg.RunID)
	if err != nil {
		e.warn("%v", err)
	}
	switch failed := pipeline.Failed(j); {
	case sctx.Err() != nil && ctx.Err() == nil:
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: hosts not started were left unchanged")}
	case failed > 0:
		return &exitError{code: ExitApplyFailed, err: fmt.Errorf("%d host(s) not changed as planned: see above and the journal", failed)}
	}
	return unauditedErr(r)
}
