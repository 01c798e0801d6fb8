package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
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

// emitWhatIf is the scan hook: when a (--assume-kernel / --assume-kafka) is
// set, or a scanned host has assume_kernel / assume_kafka in the inventory,
// it evaluates the rules on a copy of every host's facts with the assumed
// versions and prints what the upgrade would fix / introduce and the
// per-cluster rolling-restart verdict on stderr (stdout keeps the report).
// Per host, each flag wins over the matching inventory setting; hosts with
// neither are shown as "no upgrade planned" and keep their findings. Call
// it right after the scan, before waivers are applied. hosts supplies
// per-host profile overrides and planned versions (nil: prof and the
// flags for all).
func emitWhatIf(e env, r *report.Report, a whatif.Assume, prof rules.Profile, hosts []inventory.Host) error {
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
		p, err := prof.With(overrides[name])
		if err != nil {
			return prof // the scan already rejected bad overrides
		}
		return p
	})
	if err != nil {
		return usageErr("%v", err)
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
	if o.format != "table" && o.format != "json" {
		return usageErr("unknown --format %q (known: table, json)", o.format)
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
	if err := writeOutput(e.stdout, o.output, func(out io.Writer) error { return whatif.Write(out, o.format, w) }); err != nil {
		return err
	}
	if o.failUnsafe {
		for _, v := range w.Clusters {
			if !v.SafeAfter {
				return &exitError{code: ExitFindings, err: fmt.Errorf("cluster %s is not safe to rolling-restart after the upgrade", v.Cluster)}
			}
		}
	}
	return nil
}
