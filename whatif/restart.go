package whatif

import (
	"fmt"
	"sort"

	"github.com/kaudit/kaudit/audit/facts"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// RestartVerdict says whether a cluster (an inventory group) can be
// rolling-restarted now and after the assumed upgrade: only when every
// rules.RestartGateRules rule passes (or does not apply) on every host,
// since the restart-storm failure needs all of them (the kernel bug,
// cookies firing, a backlog too small to absorb the reconnects).
type RestartVerdict struct {
	Cluster       string   `json:"cluster"`
	Hosts         []string `json:"hosts"`
	SafeNow       bool     `json:"safe_now"`
	SafeAfter     bool     `json:"safe_after"`
	BlockersNow   []string `json:"blockers_now"` // "host: rule status"
	BlockersAfter []string `json:"blockers_after"`
}

func restartVerdicts(now, after *report.Report, noUpgrade map[string]bool) []RestartVerdict {
	clusters := map[string][]int{}
	proven, unaudited := clusterMembers(now.Cluster)
	for i, h := range now.Hosts {
		if h.Facts != nil && h.Facts.Role == facts.RoleClient {
			continue // a producer host is no broker to restart
		}
		for _, g := range report.HostClustersOf(&h, h.Facts, proven) {
			clusters[g] = append(clusters[g], i)
		}
	}
	names := make([]string, 0, len(clusters))
	for n := range clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	gates := rules.RestartGateRules()
	out := []RestartVerdict{}
	for _, n := range names {
		v := RestartVerdict{Cluster: n, BlockersNow: []string{}, BlockersAfter: []string{}}
		// A broker of the cluster that no audited host is: nothing says
		// it survives the restart.
		v.BlockersNow = append(v.BlockersNow, unaudited[n]...)
		v.BlockersAfter = append(v.BlockersAfter, unaudited[n]...)
		for _, i := range clusters[n] {
			v.Hosts = append(v.Hosts, now.Hosts[i].Name)
			v.BlockersNow = append(v.BlockersNow, blockers(&now.Hosts[i], gates)...)
			ba := blockers(&after.Hosts[i], gates)
			if noUpgrade[now.Hosts[i].Name] {
				for j := range ba {
					ba[j] += " (no upgrade planned)"
				}
			}
			v.BlockersAfter = append(v.BlockersAfter, ba...)
		}
		v.SafeNow, v.SafeAfter = len(v.BlockersNow) == 0, len(v.BlockersAfter) == 0
		out = append(out, v)
	}
	return out
}

// clusterMembers are the hosts proven brokers of rc (host → cluster id,
// report.ProvenClusters) and, per restart group, a blocker for each broker
// no audited host is.
func clusterMembers(rc *report.Cluster) (map[string]string, map[string][]string) {
	unaudited := map[string][]string{}
	if rc == nil {
		return report.ProvenClusters(rc), unaudited
	}
	clusterPrefix := report.ClusterPrefix
	for _, b := range rc.Brokers {
		switch {
		case b.Host == "":
			unaudited[clusterPrefix+rc.ID] = append(unaudited[clusterPrefix+rc.ID],
				fmt.Sprintf("broker %d (%s): in no inventory, not audited", b.NodeID, b.Advertised))
		case b.Proof == facts.ProofLeftOut:
			unaudited[clusterPrefix+rc.ID] = append(unaudited[clusterPrefix+rc.ID],
				fmt.Sprintf("broker %d (%s): host %s, left out of this run (--limit), not audited", b.NodeID, b.Advertised, b.Host))
		}
	}
	return report.ProvenClusters(rc), unaudited
}

func blockers(h *report.Host, gates []string) []string {
	if h.Error != nil {
		return []string{h.Name + ": not audited (" + string(h.Error.Kind) + ")"}
	}
	var out []string
	for _, id := range gates {
		found := false
		for _, f := range h.Findings {
			if f.Rule != id {
				continue
			}
			found = true
			if f.Status != rules.Pass && f.Status != rules.Skip {
				out = append(out, h.Name+": "+id+" "+string(f.Status))
			}
		}
		if !found {
			out = append(out, h.Name+": "+id+" not evaluated")
		}
	}
	return out
}

// UnsafeAfter is the first cluster (in Clusters order) that is not safe to
// rolling-restart after the upgrade, or false when every cluster is.
func (w *Result) UnsafeAfter() (cluster string, unsafe bool) {
	for _, v := range w.Clusters {
		if !v.SafeAfter {
			return v.Cluster, true
		}
	}
	return "", false
}
