package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/simhost"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "scan a simulated fleet of 8 broker hosts over real SSH on 127.0.0.1 (no root, nothing to install)",
		Description: "The demo starts in-process SSH servers on 127.0.0.1, one per simulated host (CentOS 7 with\n" +
			"Kafka 2.8.1 and SYN cookies firing, Ubuntu 20.04 on a fixed 5.4, a compliant Debian 12 with\n" +
			"Kafka 3.6, Confluent 7.1 on RHEL 8, ...) plus one unreachable host, writes a throw-away\n" +
			"known_hosts and key, and scans them exactly as `kaudit scan` scans real hosts, host keys checked.\n\n" + exitHelp,
		Flags: append(append(scanFlags()[1:], outputFlags()...), whatIfFlags()...),
		Action: func(c *cli.Context) error {
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "kaudit-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			fleet, err := simhost.Start(dir, simhost.DemoFleet(), "kafka-down-08")
			if err != nil {
				return fmt.Errorf("demo: cannot start the simulated fleet: %w", err)
			}
			defer fleet.Close()
			r, err := scanHosts(c.Context, c.App.ErrWriter, fleet.Hosts, opts, transport.NewSSH())
			if err != nil {
				return err
			}
			r.Inventory = "demo (simulated fleet on 127.0.0.1)"
			if err := postScan(c, r, opts, fleet.Hosts); err != nil {
				return err
			}
			err = emit(c.App.Writer, r, opts)
			if opts.format == "table" && opts.output == "" {
				demoPlan(c.App.Writer, r, opts.term)
			}
			return err
		},
	}
}

// demoPlan prints the fix plan's summary and the command that shows it
// whole; with -v, the whole plan.
func demoPlan(w io.Writer, r *report.Report, t termOptions) {
	if t.Verbose {
		fmt.Fprintln(w, "\nFix plan (kaudit fix INVENTORY; nothing is changed by the demo)")
		printPlan(w, r, remediate.Selector{}, t.Width)
		return
	}
	var ps []remediate.HostPlan
	for _, h := range r.Hosts {
		if h.Error == nil {
			ps = append(ps, remediate.PlanHost(h.Name, h.Facts, h.Findings, remediate.Selector{}))
		}
	}
	s := remediate.Summarize(ps)
	verb := "need"
	if s.Restarts == 1 {
		verb = "needs"
	}
	line := fmt.Sprintf("Fix plan: %s on %s, %d %s a broker restart, %s (nothing is changed by the demo)",
		countOf(s.Changes, "change", "changes"), countOf(s.Hosts, "host", "hosts"), s.Restarts, verb,
		countOf(s.Manual, "manual action", "manual actions"))
	fmt.Fprintln(w)
	for _, l := range termui.Wrap(line, t.Width, 4) {
		fmt.Fprintln(w, l)
	}
	for _, l := range termui.Wrap("the whole plan: kaudit demo -v · on your fleet: kaudit fix INVENTORY", t.Width-4, 4) {
		fmt.Fprintln(w, "    "+l)
	}
}
