package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// scanOptions are the flags of kaudit scan.
type scanOptions struct {
	limit  string
	shard  shardOpts
	fanout fanoutOpts
	probe  probeOpts
	become becomeOpts
	output outputOpts
	whatIf whatIfOpts
}

func scanCommand(e env) *cli.Command {
	o := &scanOptions{output: outputOpts{waivers: waiverOpts{now: e.now}}}
	return &cli.Command{
		Name:      "scan",
		Usage:     "audit every host of an inventory and report",
		ArgsUsage: "INVENTORY",
		Description: "INVENTORY is kaudit's YAML format, an Ansible inventory (YAML or INI, with group_vars/ and\n" +
			"host_vars/), or the JSON of ansible-inventory --list; - reads it from stdin (detected).\n" +
			"Each host gets one SSH session running one read-only POSIX sh script.\n\n" + exitHelp,
		Flags:  flags(limitFlag(&o.limit, scanLimitUsage), o.shard.flags(), o.fanout.flags(), o.probe.flags(true), o.output.flags(), o.whatIf.flags(), o.become.flags()),
		Action: func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runScan(ctx context.Context, o scanOptions, args []string, e env) error {
	eo, cfg, err := checkScan(o.output, o.fanout)
	if err != nil {
		return err
	}
	if cfg.Probe, err = o.probe.check(); err != nil {
		return err
	}
	if len(args) != 1 {
		return usageErr("scan needs exactly one INVENTORY argument (see inventory.example.yaml)")
	}
	inv, hosts, err := loadInventory(args[0], o.limit)
	if err != nil {
		return err
	}
	cfg.ClientsGroup = clientsGroup(cfg.ClientsGroup, inv)
	hosts, shard, err := o.shard.selectHosts(hosts)
	if err != nil {
		return err
	}
	runner, err := o.become.runner(e)
	if err != nil {
		return err
	}
	cfg.Runner = runner
	r, err := scan(ctx, e, hosts, cfg)
	if err != nil {
		return err
	}
	r.Inventory, r.Shard = inv.Path, shard
	if err := postScan(e, r, o.whatIf, o.output.waivers, cfg.Profile, hosts); err != nil {
		return err
	}
	return emit(e.stdout, r, eo)
}

// newRunner is the SSH transport, its warnings on stderr.
func newRunner(stderr io.Writer) *transport.SSH {
	ssh := transport.NewSSH()
	ssh.Warn = func(msg string) { fmt.Fprintf(stderr, "kaudit: warning: %s\n", msg) }
	return ssh
}

// scan runs pipeline.Scan over SSH with a progress bar on a terminal.
// Ctrl-C stops the scan promptly and marks the report interrupted.
func scan(ctx context.Context, e env, hosts []inventory.Host, cfg pipeline.Config) (*report.Report, error) {
	// Every host's profile before connecting anywhere: a bad override is
	// an inventory error, not a per-host failure.
	if _, err := pipeline.Profiles(hosts, cfg.Profile); err != nil {
		return nil, err
	}
	if cfg.Runner == nil {
		cfg.Runner = newRunner(e.stderr)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr, len(hosts))
	cfg.Progress = prog.done
	r, err := pipeline.Scan(ctx, hosts, cfg)
	prog.finish()
	return r, err
}

// postScan is the single hook for scan and demo, between the scan and
// emit: the what-if on the raw findings (when --assume-kernel or
// --assume-kafka is set, or the inventory plans an upgrade for a scanned
// host), then --waivers (when set).
func postScan(e env, r *report.Report, a whatIfOpts, w waiverOpts, prof rules.Profile, hosts []inventory.Host) error {
	if err := emitWhatIf(e, r, a.assume(), prof, hosts); err != nil {
		return err
	}
	return w.apply(e, r)
}

// emit renders the report and turns it into an exit code.
func emit(stdout io.Writer, r *report.Report, o emitOpts) error {
	err := writeOutput(stdout, o.output, func(w io.Writer) error {
		return report.Render(w, o.format, r, report.Options{Color: o.color})
	})
	if err != nil {
		return err
	}
	return exitFor(r, o)
}

func exitFor(r *report.Report, o emitOpts) error {
	failOn := o.failOn
	switch {
	case r.Interrupted:
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: %d of %d hosts audited", r.Summary.Audited, r.Summary.Hosts)}
	case r.WorstFailure().Rank() >= failOn.Rank() && r.WorstFailure() != "":
		return &exitError{code: ExitFindings}
	case o.failOnUnknown && r.Worst(rules.Unknown).Rank() >= failOn.Rank() && r.Worst(rules.Unknown) != "":
		return &exitError{code: ExitFindings, err: fmt.Errorf("%s finding(s) could not be proven safe (--fail-on-unknown)", r.Worst(rules.Unknown))}
	case r.Summary.Unreachable > 0:
		return &exitError{code: ExitUnaudited}
	}
	return nil
}
