package pipeline

import (
	"context"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/fleetpass"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Audit gathers facts from hosts, evaluates the rules on each audited host
// as it finishes and returns the summarized report. A host that cannot be
// audited is a value in the report (its Error), not an error of Audit; the
// only errors come before any connection: a *ProfileError, or a facts
// spool that cannot be created (Config.SpoolFacts). When ctx ends before
// every host is done, the report covers what was gathered and is marked
// Interrupted.
func Audit(ctx context.Context, hosts []inventory.Host, cfg Config) (*report.Report, error) {
	profiles, err := profiles(hosts, cfg.Profile)
	if err != nil {
		return nil, err
	}
	var cl *discover.Cluster
	if cfg.Cluster != nil {
		if cl, err = cfg.Cluster.Discover(ctx); err != nil {
			return nil, err
		}
	}
	sink, err := newHostSink(len(hosts), profiles, cfg)
	if err != nil {
		return nil, err
	}
	sink.cluster = cl
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	started := now()
	results := audit.Scan(ctx, hosts, audit.Options{
		Concurrency:    cfg.Concurrency,
		Timeout:        cfg.Timeout,
		ConnectTimeout: cfg.ConnectTimeout,
		SysctlKeys:     rules.SysctlKeys(),
		Files:          rules.Files(),
		PropertyKeys:   rules.PropertyKeys(),
		Runner:         cfg.Runner,
		Probe:          cfg.Probe,
		MayProbe:       cfg.Cluster.mayProbe(cl),
		Progress:       cfg.Progress,
		Finish:         sink.finish,
		ClientsGroup:   cfg.ClientsGroup,
		Probes:         cfg.ProbeRecords,
		ProbesErr:      cfg.ProbeRecordsErr,
	})
	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		ToolVersion:   cfg.ToolVersion,
		StartedAt:     started.UTC().Truncate(time.Millisecond),
		DurationMS:    now().Sub(started).Milliseconds(),
		FailOn:        string(cfg.FailOn),
		Interrupted:   ctx.Err() != nil,
	}
	r.Hosts = sink.report(results)
	if cl != nil {
		r.Cluster = clusterReport(cl, cfg.Cluster, r.Hosts, sink.fleet)
	}
	fleetpass.RunOn(r, sink.fleet)
	report.Summarize(r)
	return r, nil
}

// hostReport is one host of the report: its error, or its facts and the
// findings of every rule.
func hostReport(res audit.Result, prof rules.Profile) report.Host {
	h := report.Host{Name: res.Host.Name, Address: res.Host.Address, Groups: res.Host.Groups, DurationMS: res.Duration.Milliseconds(), Findings: []rules.Finding{}}
	if res.Host.Connection == "local" {
		h.Address = "local"
	}
	if res.Err != nil {
		h.Error = &report.HostError{Kind: res.Err.Kind, Message: res.Err.Msg}
		return h
	}
	h.Facts = res.Facts
	h.Findings = rules.Evaluate(res.Facts, prof)
	return h
}
