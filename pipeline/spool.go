package pipeline

import (
	"slices"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/whatif"
)

// hostSink turns each host's result into its report entry as the host
// finishes (audit.Options.Finish), so that a scan holds the facts of the
// hosts in flight, not of all hosts, when they are spooled
// (Config.SpoolFacts).
type hostSink struct {
	profiles map[string]rules.Profile
	spool    *report.Spool // nil: the facts stay in the report
	texts    *rules.Interner
	hosts    []report.Host
	done     []bool
	fleet    []*facts.Facts // what the fleet rules read of each host (nil: not audited)
	// cluster is what the Kafka cluster said (scan --bootstrap): a host
	// its meta.properties proves to be one of its brokers is judged by
	// that broker's running settings.
	cluster *discover.Cluster
}

func newHostSink(n int, profiles map[string]rules.Profile, cfg Config) (*hostSink, error) {
	s := &hostSink{profiles: profiles, texts: rules.NewInterner(), hosts: make([]report.Host, n), done: make([]bool, n), fleet: make([]*facts.Facts, n)}
	if cfg.SpoolFacts {
		var err error
		if s.spool, err = report.NewSpoolFor(cfg.SpoolDir, !cfg.JSONOnly); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// finish is called once per started host, concurrently for different i.
func (s *hostSink) finish(i int, res audit.Result) audit.Result {
	if s.cluster != nil {
		attachRunning(s.cluster, res.Facts)
	}
	h := hostReport(res, s.profiles[res.Host.Name])
	s.texts.Findings(h.Findings)
	s.fleet[i] = h.Facts
	if s.spool != nil && h.Facts != nil {
		if ref, err := s.spool.Put(h.Facts); err == nil {
			s.fleet[i] = s.texts.FleetFacts(h.Facts)
			h.Facts, h.Spooled = nil, ref
		}
		h.Findings = s.texts.List(h.Findings) // read-only until the fleet pass copies it
	}
	s.hosts[i], s.done[i] = h, true
	res.Facts = nil
	return res
}

// report is every host's entry, in input order: those not started
// (Ctrl-C) from their results.
func (s *hostSink) report(results []audit.Result) []report.Host {
	s.texts.ForgetLists()
	if s.spool != nil && !slices.ContainsFunc(s.hosts, func(h report.Host) bool { return h.Spooled != nil }) {
		s.spool.Close() // nothing in it: Report.Close would not find it
	}
	if len(results) == 0 {
		return nil // as a report of no hosts always was: "hosts": null
	}
	for i, res := range results {
		if !s.done[i] {
			s.hosts[i] = hostReport(res, s.profiles[res.Host.Name])
			s.fleet[i] = res.Facts
		}
	}
	return s.hosts
}

// SpoolFor is Config.SpoolFacts for a scan with the what-if of a (the
// --assume-* flags) and of the upgrades hosts plan: true when there is no
// what-if, which needs every host's facts as values (see WhatIf). Every
// format renders from a spool: JSON splices the facts back byte for byte,
// the others read what each host keeps in memory (report.Spool.Put).
func SpoolFor(a whatif.Assume, hosts []inventory.Host) bool {
	return !plansUpgrade(a, hosts)
}

// canSpool reports whether a facts spool can be made in dir; when it
// cannot (a read-only or full temporary directory), it warns and the scan
// holds every host's facts in memory, as it did before spooling.
func canSpool(c Console, dir string) bool {
	sp, err := report.NewSpool(dir)
	if err != nil {
		c.Warnf("%v; keeping every host's facts in memory instead", err)
		return false
	}
	sp.Close()
	return true
}
