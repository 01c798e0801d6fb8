package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "scan, then print the remediation plan per host (nothing changes without --apply)",
		ArgsUsage: "INVENTORY",
		Description: "The plan lists, per host, each change with its rule, from → to, whether it is applied at\n" +
			"runtime and/or persisted, and whether a broker restart is needed; then what kaudit cannot fix\n" +
			"itself (kernel, Kafka upgrades) with the recommended action. kaudit never restarts a broker.",
		Flags: append(scanFlags(),
			&cli.StringFlag{Name: "rules", Usage: "only plan fixes for these comma-separated rule `IDS`"},
			&cli.BoolFlag{Name: "apply", Usage: "apply the plan (not available in this build: see README)"},
		),
		Action: func(c *cli.Context) error {
			if c.Bool("apply") {
				return usageErr("fix --apply is not implemented yet: this build only prints the plan; nothing was changed")
			}
			if c.NArg() != 1 {
				return usageErr("fix needs exactly one INVENTORY argument")
			}
			sel, err := selector(c.String("rules"))
			if err != nil {
				return err
			}
			c.Set("format", "table") //nolint:errcheck // fix has no --format; readOptions wants one
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			inv, err := inventory.Load(c.Args().First())
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			hosts, err := inv.Select(c.String("limit"))
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			r, err := scanHosts(c.Context, c.App.ErrWriter, hosts, opts, transport.NewSSH())
			if err != nil {
				return err
			}
			printPlan(c.App.Writer, r, sel)
			if r.Summary.Unreachable > 0 {
				return &exitError{code: ExitUnaudited, err: fmt.Errorf("%d of %d hosts could not be audited, so they have no plan", r.Summary.Unreachable, r.Summary.Hosts)}
			}
			return nil
		},
	}
}

func selector(list string) (remediate.Selector, error) {
	var sel remediate.Selector
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			continue
		}
		if _, ok := rules.Lookup(id); !ok {
			return sel, usageErr("--rules: no rule %q (kaudit rules lists them)", id)
		}
		sel.Rules = append(sel.Rules, id)
	}
	return sel, nil
}

// printPlan renders the fix plan of every audited host.
func printPlan(w io.Writer, r *report.Report, sel remediate.Selector) {
	var plans []remediate.HostPlan
	for _, h := range r.Hosts {
		if h.Error != nil {
			fmt.Fprintf(w, "%s: not audited (%s: %s): no plan\n", h.Name, h.Error.Kind, h.Error.Message)
			continue
		}
		plans = append(plans, remediate.PlanHost(h.Name, h.Facts, h.Findings, sel))
	}
	remediate.RenderPlan(w, plans)
}
