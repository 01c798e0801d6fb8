package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/probe"
)

// probeCommand is scan with the probe always on.
func probeCommand(e env) *cli.Command {
	o := &scanOptions{probe: probeOpts{on: true}}
	return &cli.Command{
		Name:        "probe",
		Usage:       "audit every host like scan, and settle the SYN-cookie kernel bug by observation on each",
		ArgsUsage:   "[INVENTORY]",
		Description: helpWithExit("probe"),
		Flags:       o.flags(false),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// probeOpts are the probe's flags: --probe (scan only) and --probe-budget.
type probeOpts struct {
	on     bool
	budget time.Duration
}

func (o *probeOpts) flags(withSwitch bool) []cli.Flag {
	fs := []cli.Flag{
		&cli.DurationFlag{Name: "probe-budget", Value: probe.DefaultBudget, Usage: "time the probe may take on each host (SSH connect not included; killed after it + 2s)", Destination: &o.budget},
	}
	if withSwitch {
		fs = append([]cli.Flag{&cli.BoolFlag{Name: "probe", Usage: "also run the SYN-cookie window-scale probe on each host (needs root or become: sudo; see kaudit probe --help)", Destination: &o.on}}, fs...)
	}
	return fs
}
