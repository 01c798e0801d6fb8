package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// Config is what a scan needs besides its hosts.
type Config struct {
	Concurrency    int           // hosts audited at once; audit.DefaultConcurrency when 0
	Timeout        time.Duration // per host, connect + gather; audit.DefaultTimeout when 0
	ConnectTimeout time.Duration // TCP connect + SSH handshake
	Profile        rules.Profile // thresholds; per-host inventory overrides are applied on top
	FailOn         rules.Severity
	ToolVersion    string           // recorded in the report
	Runner         transport.Runner // nil: transport.NewSSH()
	// Probe, when set, also runs the SYN-cookie window-scale probe on
	// each host (scan --probe, kaudit probe, the demo).
	Probe *probe.Options
	// Progress, when set, is called once per host as it finishes.
	Progress func(audit.Result)
	// Now is the clock the report's start time is read from (nil: time.Now).
	Now func() time.Time
	// ClientsGroup is the inventory group of producer/consumer hosts
	// (audit.DefaultClientsGroup when ""), gathered with the client profile.
	ClientsGroup string
	// SpoolFacts keeps each audited host's facts out of memory once its
	// rules are evaluated: as their JSON in a report.Spool (a temporary
	// file in SpoolDir, os.TempDir() when "", unlinked at once) that the
	// report's hosts point to (report.Host.Spooled), the fleet rules run
	// on what they read (rules.FleetFacts). For a report rendered as JSON:
	// the other formats load the facts back whole, and the what-if, which
	// models facts as values, cannot run on it. Report.Close frees the
	// spool. A host whose facts cannot be written keeps them in memory.
	SpoolFacts bool
	SpoolDir   string
	// Cluster, when set (scan --bootstrap), asks the Kafka cluster for
	// its brokers before any host is contacted and cross-checks them with
	// the audited hosts (report.Cluster).
	Cluster *ClusterSource
}

// ProfileError is an inventory host whose profile overrides do not apply:
// an inventory error, found before any connection is made.
type ProfileError struct {
	Source string // FILE:LINE of the host in the inventory
	Host   string
	Err    error
}

func (e *ProfileError) Error() string {
	return fmt.Sprintf("%s: host %s: profile: %v", e.Source, e.Host, e.Err)
}

func (e *ProfileError) Unwrap() error { return e.Err }

// Profiles resolves every host's profile (base with the host's inventory
// overrides), keyed by host name.
func Profiles(hosts []inventory.Host, base rules.Profile) (map[string]rules.Profile, error) {
	out := make(map[string]rules.Profile, len(hosts))
	for _, h := range hosts {
		p, err := base.With(h.Profile)
		if err != nil {
			return nil, &ProfileError{Source: h.Source, Host: h.Name, Err: err}
		}
		out[h.Name] = p
	}
	return out, nil
}

// LoadProfile is the thresholds file (rules.LoadProfile), or the default
// profile when file is "". Its errors are rules' *located.Error (FILE:LINE,
// what is wrong, what to give), under "--profile"; the CLI loads it before
// any host is contacted.
func LoadProfile(file string) (rules.Profile, error) {
	if file == "" {
		return rules.DefaultProfile(), nil
	}
	p, err := rules.LoadProfile(file)
	if err != nil {
		return p, fmt.Errorf("--profile %w", err)
	}
	return p, nil
}

// Scan gathers facts from hosts, evaluates the rules on each audited host
// as it finishes and returns the summarized report. A host that cannot be
// audited is a value in the report (its Error), not an error of Scan; the
// only errors come before any connection: a *ProfileError, or a facts
// spool that cannot be created (Config.SpoolFacts). When ctx ends before
// every host is done, the report covers what was gathered and is marked
// Interrupted.
func Scan(ctx context.Context, hosts []inventory.Host, cfg Config) (*report.Report, error) {
	profiles, err := Profiles(hosts, cfg.Profile)
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
		Runner:         cfg.Runner,
		Probe:          cfg.Probe,
		Progress:       cfg.Progress,
		Finish:         sink.finish,
		ClientsGroup:   cfg.ClientsGroup,
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
	whatif.FleetPassOn(r, sink.fleet)
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

// FleetPass runs the fleet rules (rules.EvaluateFleet: the client and
// broker sides of each connection) once every host is gathered, and puts
// their findings into each audited host's. It is whatif.FleetPass, which
// the what-if re-runs on modelled facts: whatif cannot import pipeline.
func FleetPass(r *report.Report) { whatif.FleetPass(r) }
