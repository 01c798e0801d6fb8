package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/waiver"
)

// waiverClock is the clock waivers are judged against (tests replace it).
var waiverClock = time.Now

const waiversFlagName = "waivers"

// waiversFlag is --waivers FILE, shared by commands that print a report.
func waiversFlag() cli.Flag {
	return &cli.StringFlag{Name: waiversFlagName, Usage: "accept findings listed in the waiver `FILE` (YAML; kaudit waivers check FILE): they are reported as waived and no longer count in the score or exit status"}
}

// withWaiversFlag appends --waivers unless flags already has it.
func withWaiversFlag(flags []cli.Flag) []cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == waiversFlagName {
				return flags
			}
		}
	}
	return append(flags, waiversFlag())
}

// applyWaiversFlag applies the waiver file named by --waivers (if the
// command has the flag and it is set) to r, prints a warning per expired
// waiver on stderr and re-summarizes r. A bad waiver file is a usage error
// (exit 2). Call it between building the report and emit.
func applyWaiversFlag(c *cli.Context, r *report.Report) error {
	file := c.String(waiversFlagName)
	if file == "" {
		return nil
	}
	w, err := waiver.Load(file)
	if err != nil {
		return &exitError{code: ExitUsage, err: fmt.Errorf("waivers: %w", err)}
	}
	for _, msg := range waiver.ApplyWaivers(r, w, waiverClock()) {
		fmt.Fprintf(c.App.ErrWriter, "kaudit: warning: %s\n", msg)
	}
	return nil
}

func waiversCommand() *cli.Command {
	return &cli.Command{
		Name:  "waivers",
		Usage: "work with waiver files (accepted findings with a reason, an owner and an expiry date)",
		Subcommands: []*cli.Command{{
			Name:      "check",
			Usage:     "validate a waiver file and list its waivers; exit 1 when any has expired",
			ArgsUsage: "FILE",
			Description: "Every problem is reported as FILE:LINE: FIELD: what is wrong (exit 2).\n" +
				"Waivers expiring within --soon days are flagged but do not change the exit status.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "soon", Value: 14, Usage: "flag waivers that expire within `DAYS`"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("waivers check needs exactly one FILE argument")
				}
				w, err := waiver.Load(c.Args().First())
				if err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
				return checkWaivers(c, w)
			},
		}},
	}
}

func checkWaivers(c *cli.Context, w waiver.Waivers) error {
	t := waiverClock()
	out := c.App.Writer
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHERE\tSTATE\tRULE\tHOSTS/GROUPS\tOWNER\tEXPIRES\tREASON")
	expired := 0
	for _, wv := range w {
		state := "active"
		switch {
		case wv.Expires.IsZero():
			state = "active (no expiry)"
		case wv.Expired(t):
			state = "EXPIRED"
			expired++
		case wv.DaysLeft(t) <= c.Int("soon"):
			state = fmt.Sprintf("expires in %dd", wv.DaysLeft(t))
		}
		on := ""
		for _, h := range wv.Hosts {
			on += h + " "
		}
		for _, g := range wv.Groups {
			on += "@" + g + " "
		}
		exp := "-"
		if !wv.Expires.IsZero() {
			exp = wv.Expires.Format(waiver.DateLayout)
		}
		owner := wv.Owner
		if owner == "" {
			owner = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", wv.Where(), state, wv.Rule, on, owner, exp, wv.Reason)
	}
	tw.Flush()
	fmt.Fprintf(out, "\n%d waiver(s), %d expired\n", len(w), expired)
	if expired > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d waiver(s) expired: renew them with a new date or fix the findings", expired)}
	}
	return nil
}
