package main

import (
	"context"
	"fmt"
	"text/tabwriter"
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
	w, err := waiver.Load(o.file)
	if err != nil {
		return usage(fmt.Errorf("waivers: %w", err))
	}
	for _, msg := range waiver.ApplyWaivers(r, w, o.now()) {
		fmt.Fprintf(e.stderr, "kaudit: warning: %s\n", msg)
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
			Name:      "check",
			Usage:     "validate a waiver file and list its waivers; exit 1 when any has expired",
			ArgsUsage: "FILE",
			Description: "Every problem is reported as FILE:LINE: FIELD: what is wrong (exit 2).\n" +
				"Waivers expiring within --soon days are flagged but do not change the exit status.",
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
	t := o.now()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHERE\tSTATE\tRULE\tHOSTS/GROUPS\tOWNER\tEXPIRES\tREASON")
	expired := 0
	for _, wv := range w {
		if wv.Expired(t) {
			expired++
		}
		fmt.Fprintln(tw, waiverRow(wv, t, o.soon))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\n%d waiver(s), %d expired\n", len(w), expired)
	if expired > 0 {
		return &exitError{code: ExitFindings, err: fmt.Errorf("%d waiver(s) expired: renew them with a new date or fix the findings", expired)}
	}
	return nil
}

// waiverRow is one waiver as a tab-separated row of waivers check.
func waiverRow(wv waiver.Waiver, t time.Time, soon int) string {
	state := "active"
	switch {
	case wv.Expires.IsZero():
		state = "active (no expiry)"
	case wv.Expired(t):
		state = "EXPIRED"
	case wv.DaysLeft(t) <= soon:
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
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", wv.Where(), state, wv.Rule, on, owner, exp, wv.Reason)
}
