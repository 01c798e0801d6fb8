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

// fixOptions are the flags of kaudit fix; --batch, --max-failures and
// --runtime-only-ok are bound to the library's fields.
type fixOptions struct {
	limit, rules, journalDir string
	fanout                   fanoutOpts
	become                   becomeOpts
	ssh                      sshConfigOpts
	apply, yes               bool
	term                     termOpts // --width, --quiet
	sel                      remediate.Selector
	run                      pipeline.ApplyConfig
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
			&cli.IntFlag{Name: "batch", Value: 1, Usage: "with --apply: hosts changed at once after the first (canary) host", Destination: &o.run.Batch},
			&cli.IntFlag{Name: "max-failures", Value: 0, Usage: "with --apply: start no further batch once more than `N` hosts failed", Destination: &o.run.MaxFailures},
			&cli.StringFlag{Name: "journal-dir", Usage: "with --apply: where the run journal is written (default ~/.local/state/kaudit/runs)", Destination: &o.journalDir},
			&cli.BoolFlag{Name: "runtime-only-ok", Usage: "plan a change whose running value can be set but whose persistence cannot (no udev rules dir, read-only /etc/sysctl.d) as runtime only, instead of listing it as impossible on that host", Destination: &o.sel.RuntimeOnlyOK},
		}, o.ssh.flags(), o.become.flags(), o.term.layoutFlags()),
		Action: func(c *cli.Context) error { return runFix(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runFix(ctx context.Context, o fixOptions, args []string, e env) error {
	if err := o.check(args); err != nil {
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
	cfg.ClientsGroup = pipeline.ClientsGroup(cfg.ClientsGroup, inv)
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
	e.fitOpenFiles(&cfg.Concurrency)
	r, err := scan(ctx, e, hosts, cfg, t.Quiet)
	if err != nil {
		return err
	}
	o.run.Runner, o.run.Timeout, o.run.ConnectTimeout = cfg.Runner, cfg.Timeout, cfg.ConnectTimeout
	if o.apply {
		e.fitOpenFiles(&o.run.Batch)
	}
	return planOrApply(ctx, e, o, args[0], r, hosts, jdir, t.Width)
}

// check checks fix's arguments and flags, and sets the rule selector.
func (o *fixOptions) check(args []string) error {
	if len(args) != 1 {
		return usageErr("fix needs exactly one INVENTORY argument")
	}
	sel, err := pipeline.Selector(o.rules)
	if err != nil {
		return usageErr("--rules: %v (kaudit rules lists them)", err)
	}
	o.sel.Rules = sel.Rules
	if o.run.Batch < 1 {
		return usageErr("--batch must be at least 1")
	}
	if o.run.MaxFailures < 0 {
		return usageErr("--max-failures must be 0 or more")
	}
	return nil
}

// planOrApply prints the plan of a scan, or with --apply carries it out.
func planOrApply(ctx context.Context, e env, o fixOptions, invPath string, r *report.Report, hosts []inventory.Host, jdir string, width int) error {
	if r.Interrupted {
		pipeline.WritePlan(e.stdout, r, o.sel, width)
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted while scanning: nothing changed")}
	}
	if !o.apply {
		pipeline.WritePlan(e.stdout, r, o.sel, width)
		return unauditedErr(r)
	}
	return applyFix(ctx, e, o, invPath, r, pipeline.PlanFix(r, hosts, o.sel), jdir, width)
}

func unauditedErr(r *report.Report) error {
	if r.Summary.Unreachable > 0 {
		return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)}
	}
	return nil
}

// applyFix shows the plan, asks, and carries it out: fix --apply.
func applyFix(ctx context.Context, e env, o fixOptions, invPath string, r *report.Report, fp *pipeline.FixPlan, jdir string, width int) error {
	pipeline.WriteFixPlan(e.stdout, fp, width)
	if fp.Changes == 0 {
		return unauditedErr(r)
	}
	if ok, err := confirm(e, o.yes, "apply "+fp.What()+"?", "fix --apply"); !ok || err != nil {
		return err
	}
	cfg := o.run
	cfg.RunID = remediate.NewRunID(e.now())
	cfg.JournalPath = pipeline.JournalPath(jdir, cfg.RunID)
	cfg.Log = func(line string) { fmt.Fprintf(e.stderr, "kaudit: %s\n", line) }
	sctx, stop := interruptible(ctx)
	defer stop()
	pipeline.WriteApplying(e.stdout, fp, cfg)
	j, err := pipeline.Apply(sctx, fp, cfg)
	if j == nil {
		return usage(err)
	}
	pipeline.WriteRun(e.stdout, j)
	pipeline.WriteUndo(e.stdout, cfg, invPath)
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
