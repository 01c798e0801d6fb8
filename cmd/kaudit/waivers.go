package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/waiver"
)

const waiversFlagName = "waivers"

// waiverOpts is --waivers FILE and the clock waivers are judged against.
type waiverOpts struct {
	file string
	now  func() time.Time
}

// flag is --waivers FILE, as commands that print a report have it.
func (o *waiverOpts) flag() cli.Flag {
	return &cli.StringFlag{Name: waiversFlagName, Usage: "accept findings listed in the waiver `FILE` (YAML; kaudit waivers check FILE): they are reported as waived and no longer count in the score or exit status", Destination: &o.file}
}

// apply applies the waiver file (when set) to r and prints a warning per
// expired waiver on stderr. A bad waiver file is a usage error (exit 2).
// Call it between building the report and emit.
func (o waiverOpts) apply(e env, r *report.Report) error {
	if o.file == "" {
		return nil
	}
	warnings, err := waiver.ApplyFile(r, o.file, o.now())
	if err != nil {
		return usage(err)
	}
	for _, msg := range warnings {
		e.warn("%s", msg)
	}
	return nil
}

// waiversCheckOptions are the flags of kaudit waivers check.
type waiversCheckOptions struct {
	soon int
	now  func() time.Time
}

func waiversCommand(e env) *cli.Command {
	o := &waiversCheckOptions{now: e.now}
	return &cli.Command{
		Name:  "waivers",
		Usage: "work with waiver files (accepted findings with a reason, an owner and an expiry date)",
		Subcommands: []*cli.Command{{
			Name:        "check",
			Usage:       "validate a waiver file and list its waivers; exit 1 when any has expired",
			ArgsUsage:   "FILE",
			Description: help("waivers-check"),
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "soon", Value: 14, Usage: "flag waivers that expire within `DAYS`", Destination: &o.soon},
			},
			Action: func(c *cli.Context) error { return runWaiversCheck(c.Context, *o, c.Args().Slice(), e) },
		}},
	}
}

func runWaiversCheck(_ context.Context, o waiversCheckOptions, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("waivers check needs exactly one FILE argument")
	}
	w, err := waiver.Load(args[0])
	if err != nil {
		return usage(err)
	}
	expired := waiver.WriteCheck(e.stdout, w, o.now(), o.soon)
	if expired > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d waiver(s) expired: renew them with a new date or fix the findings", expired)}
	}
	return nil
}
