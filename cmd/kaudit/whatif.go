package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// whatIfOpts are --assume-kernel and --assume-kafka.
type whatIfOpts struct{ kernel, kafka string }

func (o *whatIfOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "assume-kernel", Usage: "what if every host ran kernel `RELEASE` (after a reboot): which findings would it fix or introduce; overrides the inventory's assume_kernel", Destination: &o.kernel},
		&cli.StringFlag{Name: "assume-kafka", Usage: "what if every broker ran Kafka `VERSION` (3.6.1, or confluent:7.6.0) after a restart; overrides the inventory's assume_kafka", Destination: &o.kafka},
	}
}

func (o whatIfOpts) assume() whatif.Assume { return whatif.Assume{Kernel: o.kernel, Kafka: o.kafka} }

// emitWhatIf is the scan hook: the what-if of pipeline.WhatIf (when a is
// set, or a host of hosts plans an upgrade) on stderr, stdout keeping the
// report. Call it right after the scan, before waivers are applied.
func emitWhatIf(e env, r *report.Report, a whatif.Assume, prof rules.Profile, hosts []inventory.Host) error {
	w, err := pipeline.WhatIf(r, a, prof, hosts)
	if err != nil {
		return usage(err)
	}
	if w == nil {
		return nil
	}
	fmt.Fprintln(e.stderr)
	if err := whatif.Write(e.stderr, "table", w); err != nil {
		return usage(err)
	}
	return nil
}

// whatifOptions are the flags of kaudit whatif.
type whatifOptions struct {
	assume         whatIfOpts
	profile        string
	format, output string
	failUnsafe     bool
}

// whatifCommand runs the what-if on a saved JSON scan.
func whatifCommand(e env) *cli.Command {
	o := &whatifOptions{}
	return &cli.Command{
		Name:        "whatif",
		Usage:       "pre-upgrade what-if on a JSON scan: which findings a kernel / Kafka upgrade would fix or introduce, and is a rolling restart safe",
		ArgsUsage:   "SCAN.json",
		Description: strings.Replace(help("whatif"), "{{restart-gate-rules}}", fmt.Sprint(rules.RestartGateRules()), 1),
		Flags: flags(o.assume.flags(), []cli.Flag{
			&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (as for scan)", Destination: &o.profile},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json", Destination: &o.format},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout", Destination: &o.output},
			&cli.BoolFlag{Name: "fail-unsafe", Usage: "exit 1 when a cluster is not safe to rolling-restart after the upgrade", Destination: &o.failUnsafe},
		}),
		Action: func(c *cli.Context) error { return runWhatif(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runWhatif(_ context.Context, o whatifOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("whatif needs exactly one SCAN.json argument (written by kaudit scan -f json)")
	}
	a := o.assume.assume()
	if a.Kernel == "" && a.Kafka == "" {
		return usageErr("whatif needs --assume-kernel RELEASE and/or --assume-kafka VERSION")
	}
	if err := oneOf("format", o.format, whatif.Formats); err != nil {
		return err
	}
	r, err := report.Load(args[0])
	if err != nil {
		return usage(err)
	}
	prof, err := loadProfile(o.profile)
	if err != nil {
		return err
	}
	w, err := whatif.Evaluate(r, a, func(string) rules.Profile { return prof })
	if err != nil {
		return usageErr("%v", err)
	}
	if err := pipeline.WriteOutput(e.stdout, o.output, func(out io.Writer) error { return whatif.Write(out, o.format, w) }); err != nil {
		return err
	}
	if cluster, unsafe := w.UnsafeAfter(); o.failUnsafe && unsafe {
		return &exitError{code: ExitFindings, err: fmt.Errorf("cluster %s is not safe to rolling-restart after the upgrade", cluster)}
	}
	return nil
}
