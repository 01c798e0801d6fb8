package whatif

import (
	"maps"
	"slices"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/fleetpass"
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
	proven, unaudited := fleetpass.Members(now.Cluster)
	for i, h := range now.Hosts {
		if h.Facts != nil && h.Facts.Role == facts.RoleClient {
			continue // a producer host is no broker to restart
		}
		for _, g := range report.HostClustersOf(&h, h.Facts, proven) {
			clusters[g] = append(clusters[g], i)
		}
	}
	names := slices.Sorted(maps.Keys(clusters))
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
