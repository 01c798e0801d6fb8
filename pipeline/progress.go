package pipeline

import (
	"context"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/whatif"
)

// ScanOnTerminal is Scan as a person runs it: every host's profile
// checked before connecting anywhere (a bad override is an inventory
// error, not a per-host failure), a progress bar on c's stderr when it is
// a terminal (unless quiet), and Ctrl-C ending the scan promptly with the
// report marked interrupted. A nil cfg.Runner is an SSH runner whose
// warnings go to c.
func ScanOnTerminal(ctx context.Context, c Console, hosts []inventory.Host, cfg Config, quiet bool) (*report.Report, error) {
	if _, err := Profiles(hosts, cfg.Profile); err != nil {
		return nil, err
	}
	if cfg.Runner == nil {
		ssh := transport.NewSSH()
		ssh.Warn = c.Warn
		cfg.Runner = ssh
	}
	ctx, stop := Interruptible(ctx)
	defer stop()
	bar := termui.StartBar(c.Stderr, len(hosts), quiet)
	cfg.Progress = func(res audit.Result) { bar.Done(res.Err != nil) }
	r, err := Scan(ctx, hosts, cfg)
	bar.Finish()
	return r, err
}

// ReportJob is a scan that prints a report (kaudit scan, probe, demo).
type ReportJob struct {
	Hosts            []inventory.Host
	Config           Config
	Inventory, Shard string        // recorded in the report
	WhatIf           whatif.Assume // --assume-kernel, --assume-kafka
	Output           Output
}

// ScanReport runs j: the scan (ScanOnTerminal), then the what-if on the
// raw findings on c's stderr (when j.WhatIf is set, or the inventory
// plans an upgrade for a scanned host), then the waivers, then the report
// and its verdict (Emit). The report is nil when it was not emitted. A
// JSON report without a what-if spools the facts (SpoolFor): Close it.
func ScanReport(ctx context.Context, c Console, j ReportJob) (*report.Report, error) {
	if err := j.Output.loadWaivers(); err != nil {
		return nil, err
	}
	if SpoolFor(j.Output.Format, j.WhatIf, j.Hosts) {
		j.Config.SpoolFacts = canSpool(c, j.Config.SpoolDir)
	}
	r, err := ScanOnTerminal(ctx, c, j.Hosts, j.Config, j.Output.Quiet)
	if err != nil {
		return nil, err
	}
	r.Inventory, r.Shard = j.Inventory, j.Shard
	if err := WriteWhatIf(c.Stderr, r, j.WhatIf, j.Config.Profile, j.Hosts); err != nil {
		return nil, err
	}
	Waive(c, r, j.Output.waivers)
	return r, Emit(c.Stdout, r, j.Output)
}
