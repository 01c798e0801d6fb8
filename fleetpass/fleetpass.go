// Package fleetpass is the fleet pass: the rules that need more than one
// host (rules.EvaluateFleet: both ends of each connection, peer
// consistency within a cluster) run over every audited host of a report
// and merged into each host's findings, and the cluster membership they
// and the restart verdict group hosts by. Every scan runs it once every
// host is in (pipeline.Audit), kaudit merge over the joined shards, and
// the what-if on its modelled facts; it imports no package that scans.
package fleetpass

import (
	"fmt"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Run runs the fleet rules over every audited host of r and puts their
// findings into each audited host's. The what-if re-runs it on the
// modelled facts with the connections kept as observed (it does not model
// reconnections).
func Run(r *report.Report) {
	fleet := make([]*facts.Facts, len(r.Hosts))
	for i, h := range r.Hosts {
		fleet[i] = h.Facts
	}
	RunOn(r, fleet)
}

// RunOn is Run with the facts of r.Hosts[i] in fleet[i] (nil: not
// audited), for a scan that no longer holds them in the report
// (pipeline.Config.SpoolFacts keeps rules.FleetFacts of each host). It
// clears fleet's entries once the fleet rules have read them.
func RunOn(r *report.Report, fleet []*facts.Facts) {
	hosts := make([]rules.FleetHost, len(r.Hosts))
	proven, _ := Members(r.Cluster)
	for i, h := range r.Hosts {
		hosts[i] = rules.FleetHost{Name: h.Name, Address: h.Address, Facts: fleet[i], Groups: report.HostClustersOf(&r.Hosts[i], fleet[i], proven)}
		if h.Error != nil {
			hosts[i].Facts = nil
		}
	}
	found := rules.EvaluateFleet(hosts)
	// The facts are read no more: a scan's fleet (pipeline) is let go
	// before every host's findings are copied with the fleet rules' in.
	audited := make([]bool, len(fleet))
	for i := range fleet {
		audited[i] = r.Hosts[i].Error == nil && fleet[i] != nil
	}
	clear(fleet)
	for i := range hosts {
		hosts[i].Facts = nil
	}
	for i, fs := range found {
		if audited[i] {
			r.Hosts[i].Findings = rules.ApplyFleet(r.Hosts[i].Findings, fs)
		}
		found[i] = nil
	}
}

// Members are the hosts proven brokers of rc (host → cluster id,
// report.ProvenClusters) and, per restart group, a blocker for each broker
// no audited host is (the restart verdict's: nothing says it survives).
func Members(rc *report.Cluster) (proven map[string]string, unaudited map[string][]string) {
	unaudited = map[string][]string{}
	if rc == nil {
		return report.ProvenClusters(rc), unaudited
	}
	group := report.ClusterPrefix + rc.ID
	for _, b := range rc.Brokers {
		switch {
		case b.Host == "":
			unaudited[group] = append(unaudited[group],
				fmt.Sprintf("broker %d (%s): in no inventory, not audited", b.NodeID, b.Advertised))
		case b.Proof == facts.ProofLeftOut:
			unaudited[group] = append(unaudited[group],
				fmt.Sprintf("broker %d (%s): host %s, left out of this run (--limit), not audited", b.NodeID, b.Advertised, b.Host))
		}
	}
	return report.ProvenClusters(rc), unaudited
}
