package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// whatIfFlags are --assume-kernel and --assume-kafka.
func whatIfFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "assume-kernel", Usage: "what if every host ran kernel `RELEASE` (after a reboot): which findings would it fix or introduce; overrides the inventory's assume_kernel"},
		&cli.StringFlag{Name: "assume-kafka", Usage: "what if every broker ran Kafka `VERSION` (3.6.1, or confluent:7.6.0) after a restart; overrides the inventory's assume_kafka"},
	}
}

// emitWhatIf is the scan hook: when --assume-kernel or --assume-kafka is
// set, or a scanned host has assume_kernel / assume_kafka in the inventory,
// it evaluates the rules on a copy of every host's facts with the assumed
// versions and prints what the upgrade would fix / introduce and the
// per-cluster rolling-restart verdict on stderr (stdout keeps the report).
// Per host, each flag wins over the matching inventory setting; hosts with
// neither are shown as "no upgrade planned" and keep their findings. Call
// it right after scanHosts, before waivers are applied. hosts supplies
// per-host profile overrides and planned versions (nil: o.profile and the
// flags for all).
func emitWhatIf(c *cli.Context, r *report.Report, o options, hosts []inventory.Host) error {
	a := whatif.Assume{Kernel: c.String("assume-kernel"), Kafka: c.String("assume-kafka")}
	overrides := map[string]map[string]any{}
	planned := map[string]whatif.Assume{}
	for _, h := range hosts {
		overrides[h.Name] = h.Profile
		if h.AssumeKernel != "" || h.AssumeKafka != "" {
			planned[h.Name] = whatif.Assume{Kernel: h.AssumeKernel, Kafka: h.AssumeKafka}
		}
	}
	if a.Kernel == "" && a.Kafka == "" && len(planned) == 0 {
		return nil
	}
	w, err := whatif.EvaluatePlan(r, a, func(name string) whatif.Assume { return planned[name] }, func(name string) rules.Profile {
		p, err := o.profile.With(overrides[name])
		if err != nil {
			return o.profile // scanHosts already rejected bad overrides
		}
		return p
	})
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Fprintln(c.App.ErrWriter)
	if err := whatif.Write(c.App.ErrWriter, "table", w); err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	return nil
}

// whatifCommand runs the what-if on a saved JSON scan.
func whatifCommand() *cli.Command {
	return &cli.Command{
		Name:      "whatif",
		Usage:     "pre-upgrade what-if on a JSON scan: which findings a kernel / Kafka upgrade would fix or introduce, and is a rolling restart safe",
		ArgsUsage: "SCAN.json",
		Description: "Re-evaluates every rule on a copy of each audited host's facts with the kernel release\n" +
			"and/or Kafka version replaced (a kernel upgrade implies a reboot: runtime sysctls take their\n" +
			"persisted values; either implies a broker restart: the listener backlog is recomputed).\n" +
			"Thresholds: the default profile or --profile FILE (per-host inventory overrides are not in\n" +
			"the JSON scan; `kaudit scan --assume-kernel` applies them). Likewise the upgrades planned per\n" +
			"host with assume_kernel / assume_kafka in the inventory apply to `kaudit scan` only: here the\n" +
			"flags apply to every host.\n\n" +
			"Per cluster (inventory group): a rolling restart is safe only when " + fmt.Sprint(rules.RestartGateRules()) + "\n" +
			"pass (or do not apply) on every host.\n\n" +
			"EXIT STATUS:\n" +
			"   0    evaluated (or, with --fail-unsafe, every cluster is safe after the upgrade)\n" +
			"   1    --fail-unsafe and some cluster is not safe to rolling-restart after the upgrade\n" +
			"   2    usage error or a file that is not a kaudit JSON report",
		Flags: append(whatIfFlags(),
			&cli.StringFlag{Name: "profile", Usage: "threshold overrides from `FILE` (as for scan)"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "table", Usage: "table or json"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "fail-unsafe", Usage: "exit 1 when a cluster is not safe to rolling-restart after the upgrade"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("whatif needs exactly one SCAN.json argument (written by kaudit scan -f json)")
			}
			a := whatif.Assume{Kernel: c.String("assume-kernel"), Kafka: c.String("assume-kafka")}
			if a.Kernel == "" && a.Kafka == "" {
				return usageErr("whatif needs --assume-kernel RELEASE and/or --assume-kafka VERSION")
			}
			format := c.String("format")
			if format != "table" && format != "json" {
				return usageErr("unknown --format %q (known: table, json)", format)
			}
			r, err := report.Load(c.Args().First())
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			prof := rules.DefaultProfile()
			if p := c.String("profile"); p != "" {
				if prof, err = rules.LoadProfile(p); err != nil {
					return &exitError{code: ExitUsage, err: err}
				}
			}
			w, err := whatif.Evaluate(r, a, func(string) rules.Profile { return prof })
			if err != nil {
				return usageErr("%v", err)
			}
			if err := writeWhatIfTo(c, format, w); err != nil {
				return err
			}
			if c.Bool("fail-unsafe") {
				for _, v := range w.Clusters {
					if !v.SafeAfter {
						return &exitError{code: ExitFindings, err: fmt.Errorf("cluster %s is not safe to rolling-restart after the upgrade", v.Cluster)}
					}
				}
			}
			return nil
		},
	}
}

func writeWhatIfTo(c *cli.Context, format string, w *whatif.Result) error {
	return writeOutput(c.App.Writer, c.String("output"), func(out io.Writer) error { return whatif.Write(out, format, w) })
}

// postScan is the single hook for scan and demo, between scanHosts and
// emit: the what-if on the raw findings (when --assume-kernel or
// --assume-kafka is set, or the inventory plans an upgrade for a scanned
// host), then --waivers (when set). Commands without these flags or
// settings are unaffected.
func postScan(c *cli.Context, r *report.Report, o options, hosts []inventory.Host) error {
	if err := emitWhatIf(c, r, o, hosts); err != nil {
		return err
	}
	return applyWaiversFlag(c, r)
}
