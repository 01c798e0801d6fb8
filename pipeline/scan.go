package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/probe"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termui"
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
	// on what they read (rules.FleetFacts), the formats other than JSON on
	// what the spool keeps in memory of them (report.Spool.Put). The
	// what-if, which models facts as values, cannot run on it. Report.Close
	// frees the spool. A host whose facts cannot be written keeps them in
	// memory.
	SpoolFacts bool
	SpoolDir   string
	// JSONOnly: the report is rendered as JSON alone (scan -f json), so a
	// spooled host keeps nothing in memory for the other formats
	// (report.NewSpoolFor); rendering it in another format is an error.
	JSONOnly bool
	// ProbeRecords, when set, keeps each probe's verdict for the host's
	// boot and gives the hosts without a probe in this run theirs
	// (probe.Records; probeRecordsAt); ProbeRecordsErr is told what it could
	// not read or write (nil: nothing is said).
	ProbeRecords    *probe.Records
	ProbeRecordsErr func(error)
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

// profiles resolves every host's profile (base with the host's inventory
// overrides), keyed by host name. A host without overrides shares base
// (the rules only read a profile): 10,000 copies of it were 5.7 MB.
func profiles(hosts []inventory.Host, base rules.Profile) (map[string]rules.Profile, error) {
	out := make(map[string]rules.Profile, len(hosts))
	for _, h := range hosts {
		if len(h.Profile) == 0 {
			out[h.Name] = base
			continue
		}
		p, err := base.With(h.Profile)
		if err != nil {
			return nil, &ProfileError{Source: h.Source, Host: h.Name, Err: err}
		}
		out[h.Name] = p
	}
	return out, nil
}

// loadProfile is the thresholds file (rules.LoadProfile), or the default
// profile when file is "". Its errors are rules' *located.Error (FILE:LINE,
// what is wrong, what to give), under "--profile"; the CLI loads it before
// any host is contacted.
func loadProfile(file string) (rules.Profile, error) {
	if file == "" {
		return rules.DefaultProfile(), nil
	}
	p, err := rules.LoadProfile(file)
	if err != nil {
		return p, fmt.Errorf("--profile %w", err)
	}
	return p, nil
}

// Scan is kaudit scan and probe: the hosts of f (of shard K/N, when
// set: selectShard) scanned and reported as j says (scanReport); j's
// hosts, inventory and shard are set here.
func Scan(ctx context.Context, c Console, f Fleet, shard string, j ReportJob) error {
	if shard != "" && j.Config.Cluster != nil {
		return errShardedCluster
	}
	if err := j.Output.loadWaivers(); err != nil {
		return err
	}
	inv, hosts, err := f.loadOrDiscover(ctx, c, j.Config.Cluster)
	if err != nil {
		return err
	}
	j.Config.ClientsGroup, j.Inventory = clientsGroup(j.Config.ClientsGroup, inv), inv.Path
	if j.Hosts, j.Shard, err = selectShard(hosts, shard); err != nil {
		return err
	}
	runner, err := f.connect(c, j.Hosts, &j.Config.Concurrency)
	if err != nil {
		return err
	}
	defer runner.Close()
	j.Config.Runner = runner
	r, err := scanReport(ctx, c, j)
	if r != nil {
		warnConfigs(c, r.Cluster, "the rules judge the files read over SSH")
		r.Close()
	}
	return err
}

// errShardedCluster refuses scan --shard with --bootstrap: each shard
// would judge the cluster against its own hosts alone.
var errShardedCluster = located.Hint(errors.New("--shard and --bootstrap cannot be combined: a shard audits only its own hosts, so every broker of another shard would read as unaudited, and kaudit merge could not join the shards' cluster sections"),
	"scan with --bootstrap unsharded (the cluster is asked once; --concurrency bounds the SSH fan-out), or shard without --bootstrap")

// ReportJob is a scan that prints a report (kaudit scan, probe, demo).
type ReportJob struct {
	Hosts            []inventory.Host
	Config           Config
	Inventory, Shard string        // recorded in the report
	WhatIf           whatif.Assume // --assume-kernel, --assume-kafka
	Output           Output
	// keepFacts keeps every host's facts in the report (no spool): the
	// flow reads them after the report is printed (the demo's fix plan).
	keepFacts bool
}

// scanReport runs j: the scan (auditOnTerminal), then the what-if on the
// raw findings on c's stderr (when j.WhatIf is set, or the inventory
// plans an upgrade for a scanned host), then the waivers, then the report
// and its verdict (emit). The report is nil when it was not emitted. A
// scan without a what-if spools the facts (SpoolFor): Close it.
func scanReport(ctx context.Context, c Console, j ReportJob) (*report.Report, error) {
	if err := j.Output.loadWaivers(); err != nil {
		return nil, err
	}
	if !j.keepFacts && SpoolFor(j.WhatIf, j.Hosts) {
		j.Config.SpoolFacts = canSpool(c, j.Config.SpoolDir)
		j.Config.JSONOnly = j.Output.Format == "json"
	}
	r, err := auditOnTerminal(ctx, c, j.Hosts, j.Config, j.Output.Quiet)
	if err != nil {
		return nil, err
	}
	r.Inventory, r.Shard = j.Inventory, j.Shard
	if err := WriteWhatIf(c.Stderr, r, j.WhatIf, j.Config.Profile, j.Hosts); err != nil {
		return nil, err
	}
	waive(c, r, j.Output.waivers)
	return r, emit(c.Stdout, r, j.Output)
}

// auditOnTerminal is Audit as a person runs it: every host's profile
// checked before connecting anywhere (a bad override is an inventory
// error, not a per-host failure), a progress bar on c's stderr when it is
// a terminal (unless quiet), and Ctrl-C ending the scan promptly with the
// report marked interrupted. A nil cfg.Runner is an SSH runner whose
// warnings go to c.
func auditOnTerminal(ctx context.Context, c Console, hosts []inventory.Host, cfg Config, quiet bool) (*report.Report, error) {
	if _, err := profiles(hosts, cfg.Profile); err != nil {
		return nil, err
	}
	if cfg.Runner == nil {
		ssh := transport.NewSSH()
		ssh.Warn = c.Warn
		cfg.Runner = ssh
	}
	ctx, stop := interruptible(ctx)
	defer stop()
	if cfg.ProbeRecords != nil && cfg.ProbeRecordsErr == nil {
		var once sync.Once
		cfg.ProbeRecordsErr = func(err error) {
			once.Do(func() { c.Warnf("%v: probe verdicts are neither kept nor used in this run", err) })
		}
	}
	bar := termui.StartBar(c.Stderr, len(hosts), quiet)
	cfg.Progress = func(res audit.Result) { bar.Done(res.Err != nil) }
	r, err := Audit(ctx, hosts, cfg)
	bar.Finish()
	return r, err
}
