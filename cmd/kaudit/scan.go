package main

import (
	"context"
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
)

// scanOptions are the flags of kaudit scan.
type scanOptions struct {
	limit  string
	shard  shardOpts
	probe  probeOpts
	become becomeOpts
	ssh    sshConfigOpts
	reportOpts
}

// reportOpts are the flags of a command that scans and prints a report:
// scan and demo.
type reportOpts struct {
	fanout fanoutOpts
	output outputOpts
	whatIf whatIfOpts
}

func newReportOpts(e env) reportOpts {
	return reportOpts{output: outputOpts{waivers: waiverOpts{now: e.now}, term: termOpts{stdout: e.stdout}}}
}

func (o *reportOpts) flags() []cli.Flag {
	return flags(o.fanout.flags(), o.output.flags(), o.whatIf.flags())
}

func scanCommand(e env) *cli.Command {
	o := &scanOptions{reportOpts: newReportOpts(e)}
	return &cli.Command{
		Name:        "scan",
		Usage:       "audit every host of an inventory and report",
		ArgsUsage:   "INVENTORY",
		Description: helpWithExit("scan"),
		Flags:       o.flags(true),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// flags are scan's (withProbeSwitch) or probe's flags.
func (o *scanOptions) flags(withProbeSwitch bool) []cli.Flag {
	return flags(limitFlag(&o.limit, scanLimitUsage), o.shard.flags(), o.reportOpts.flags(), o.probe.flags(withProbeSwitch), o.ssh.flags(), o.become.flags())
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
	cfg.ClientsGroup = pipeline.ClientsGroup(cfg.ClientsGroup, inv)
	hosts, shard, err := o.shard.selectHosts(hosts)
	if err != nil {
		return err
	}
	runner, err := connect(e, hosts, o.ssh, o.become)
	if err != nil {
		return err
	}
	defer runner.Close()
	cfg.Runner = runner
	e.fitOpenFiles(&cfg.Concurrency)
	_, err = scanAndEmit(ctx, e, o.reportOpts, eo, cfg, hosts, inv.Path, shard)
	return err
}

// scanAndEmit is what scan and demo run once their hosts are known: the
// scan, then the what-if on the raw findings (when --assume-kernel or
// --assume-kafka is set, or the inventory plans an upgrade for a scanned
// host), then --waivers (when set), then the report and its exit status.
// The report is nil when it was not emitted.
func scanAndEmit(ctx context.Context, e env, o reportOpts, eo emitOpts, cfg pipeline.Config, hosts []inventory.Host, inventory, shard string) (*report.Report, error) {
	r, err := scan(ctx, e, hosts, cfg, eo.term.Quiet)
	if err != nil {
		return nil, err
	}
	r.Inventory, r.Shard = inventory, shard
	if err := emitWhatIf(e, r, o.whatIf.assume(), cfg.Profile, hosts); err != nil {
		return nil, err
	}
	if err := o.output.waivers.apply(e, r); err != nil {
		return nil, err
	}
	return r, emit(e.stdout, r, eo)
}

// newRunner is the SSH transport, its warnings on stderr.
func newRunner(e env) *transport.SSH {
	ssh := transport.NewSSH()
	ssh.Warn = e.warnLine
	return ssh
}

// scan runs pipeline.Scan over SSH with a progress bar on a terminal
// (unless quiet). Ctrl-C stops the scan promptly and marks the report
// interrupted.
func scan(ctx context.Context, e env, hosts []inventory.Host, cfg pipeline.Config, quiet bool) (*report.Report, error) {
	// Every host's profile before connecting anywhere: a bad override is
	// an inventory error, not a per-host failure.
	if _, err := pipeline.Profiles(hosts, cfg.Profile); err != nil {
		return nil, err
	}
	if cfg.Runner == nil {
		cfg.Runner = newRunner(e)
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	bar := termui.StartBar(e.stderr, len(hosts), quiet)
	cfg.Progress = func(res audit.Result) { bar.Done(res.Err != nil) }
	r, err := pipeline.Scan(ctx, hosts, cfg)
	bar.Finish()
	return r, err
}

// emit renders the report and turns it into an exit code.
func emit(stdout io.Writer, r *report.Report, o emitOpts) error {
	err := pipeline.WriteOutput(stdout, o.output, func(w io.Writer) error {
		return report.Render(w, o.format, r, report.Options{Color: o.term.Color, Width: o.term.Width, Verbose: o.term.Verbose})
	})
	if err != nil {
		return err
	}
	return exitFor(r, o)
}

// exitFor is the exit status of a report's verdict (pipeline.Judge).
func exitFor(r *report.Report, o emitOpts) error {
	v, msg := pipeline.Judge(r, o.failOn, o.failOnUnknown)
	ee := &exitError{code: ExitFindings}
	switch v {
	case pipeline.Pass:
		return nil
	case pipeline.Unaudited:
		ee.code = ExitUnaudited
	case pipeline.Interrupted:
		ee.code = ExitInterrupted
	}
	if msg != "" {
		ee.err = errors.New(msg)
	}
	return ee
}

// shardOpts is --shard K/N for scan-like commands.
type shardOpts struct{ spec string }

func (o *shardOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "shard", Destination: &o.spec,
		Usage: "audit only shard `K/N` of the selected hosts (K from 0, e.g. \"$JOB_COMPLETION_INDEX/3\"); " +
			"a host's shard depends on its name alone; join the reports with kaudit merge"}}
}

// selectHosts applies --shard to hosts and returns the shard ("" without
// the flag) for the report. A malformed K/N is a usage error.
func (o shardOpts) selectHosts(hosts []inventory.Host) ([]inventory.Host, string, error) {
	if o.spec == "" {
		return hosts, "", nil
	}
	s, err := inventory.ParseShard(o.spec)
	if err != nil {
		return nil, "", usageErr("--shard: %v", err)
	}
	return inventory.SelectShard(s, hosts), s.String(), nil
}
