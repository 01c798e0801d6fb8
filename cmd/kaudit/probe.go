package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/probe"
)

const probeHelp = "The probe settles kernel-synack-wscale by observation. On each host, as root (directly or\n" +
	"through become: sudo), one more SSH session runs the host's own python3 (RHEL 8: platform-python)\n" +
	"inside a throw-away network namespace: tcp_syncookies=2 there only, a listener with SO_RCVBUF\n" +
	"set as the broker sets it (socket.receive.buffer.bytes, default 102400; also 65536 and the host's\n" +
	"rmem_max), a loopback client; it compares the window scale the client was told with the one\n" +
	"the accepted socket uses and sends 384 KiB through. Nothing is written to disk, the namespace dies\n" +
	"with the process, the host's own tcp_syncookies is never written (kernels where it is not per\n" +
	"namespace, 3.10 / RHEL 7, are never probed). Without root the probe is skipped (unknown, \"needs\n" +
	"root (become)\"). Verdict sources, strongest first: probe, changelog, version table."

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

// check says whether and how this scan probes (nil: no probe).
func (o probeOpts) check() (*probe.Options, error) {
	if !o.on {
		return nil, nil
	}
	if o.budget < probe.MinBudget || o.budget > probe.MaxBudget {
		return nil, usageErr("--probe-budget must be between %s and %s", probe.MinBudget, probe.MaxBudget)
	}
	return &probe.Options{Budget: o.budget}, nil
}

// probeCommand is scan with the probe always on.
func probeCommand(e env) *cli.Command {
	o := &scanOptions{reportOpts: newReportOpts(e), probe: probeOpts{on: true}}
	return &cli.Command{
		Name:        "probe",
		Usage:       "audit every host like scan, and settle the SYN-cookie kernel bug by observation on each",
		ArgsUsage:   "INVENTORY",
		Description: "kaudit probe INVENTORY is kaudit scan --probe INVENTORY.\n\n" + probeHelp + "\n\n" + help("exit"),
		Flags:       o.flags(false),
		Action:      func(c *cli.Context) error { return runScan(c.Context, *o, c.Args().Slice(), e) },
	}
}

// demoProbe is what the demo probes with: the simulated hosts answer the
// probe's protocol without running it.
func demoProbe() *probe.Options { return &probe.Options{Budget: 2 * time.Second} }
