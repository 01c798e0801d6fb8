package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/simhost"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
)

// demoOptions are the flags of kaudit demo: scan's, but no --limit (the
// fleet is fixed).
type demoOptions struct {
	fanout fanoutOpts
	output outputOpts
	whatIf whatIfOpts
}

func demoCommand(e env) *cli.Command {
	o := &demoOptions{output: outputOpts{waivers: waiverOpts{now: e.now}}}
	return &cli.Command{
		Name:  "demo",
		Usage: "scan a simulated fleet of 9 broker hosts and a producer over real SSH on 127.0.0.1 (no root, nothing to install)",
		Description: "The demo starts in-process SSH servers on 127.0.0.1, one per simulated host (CentOS 7 with\n" +
			"Kafka 2.8.1 and SYN cookies firing, Ubuntu 20.04 on a fixed 5.4, a compliant Debian 12 with\n" +
			"Kafka 3.6, Confluent 7.1 on RHEL 8, Confluent 7.1.7 with the KIP-764 backport, ...), a producer\n" +
			"host of the clients group whose connections expose the wscale mismatch, plus one unreachable\n" +
			"host, writes a throw-away\n" +
			"known_hosts and key, and scans them exactly as `kaudit scan` scans real hosts, host keys checked.\n\n" + exitHelp,
		Flags:  flags(o.fanout.flags(), o.output.flags(), o.whatIf.flags()),
		Action: func(c *cli.Context) error { return runDemo(c.Context, *o, c.Args().Slice(), e) },
	}
}

func runDemo(ctx context.Context, o demoOptions, _ []string, e env) error {
	eo, cfg, err := checkScan(o.output, o.fanout)
	if err != nil {
		return err
	}
	cfg.Probe = demoProbe()
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
	r, err := scan(ctx, e, fleet.Hosts, cfg)
	if err != nil {
		return err
	}
	r.Inventory = "demo (simulated fleet on 127.0.0.1)"
	if err := postScan(e, r, o.whatIf, o.output.waivers, cfg.Profile, fleet.Hosts); err != nil {
		return err
	}
	err = emit(e.stdout, r, eo)
	if eo.format == "table" && eo.output == "" {
		fmt.Fprintln(e.stdout, "\nFix plan (kaudit fix INVENTORY; nothing is changed by the demo)")
		pipeline.WritePlan(e.stdout, r, remediate.Selector{})
	}
	return err
}
