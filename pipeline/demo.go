package pipeline

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/test/simhost"
)

// demoInventory is what the demo's report names as its inventory.
const demoInventory = "demo (simulated fleet on 127.0.0.1)"

// Demo is kaudit demo: j run on the simulated fleet (simhost.DemoFleet
// with kafka-down-08 unreachable), served over real SSH on 127.0.0.1 for
// the run and probed (the simulated hosts answer the probe's protocol
// without running it); under a table on stdout, the fix plan's summary,
// or with Verbose the whole plan (writeDemoPlan).
func Demo(ctx context.Context, c Console, j ReportJob) error {
	if err := j.Output.loadWaivers(); err != nil {
		return err
	}
	j.Config.Probe = &probe.Options{Budget: 2 * time.Second}
	j.Config.ProbeRecords = nil // the simulated hosts' keys are new each run: nothing to keep
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
	j.Hosts, j.Inventory = fleet.Hosts, demoInventory
	j.keepFacts = true // writeDemoPlan plans from every host's facts
	r, err := scanReport(ctx, c, j)
	if r != nil {
		defer r.Close()
	}
	if r != nil && j.Output.Format == "table" && j.Output.Path == "" {
		writeDemoPlan(c.Stdout, r, j.Output.Render.Verbose, j.Output.Render.Width)
	}
	return err
}
