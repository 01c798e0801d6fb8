package waiver

import (
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/kaudit/kaudit/report"
)

// A cluster rule's finding (scan --bootstrap: broker-unaudited,
// host-not-a-broker, …) is about a broker, a host, or the cluster as a
// whole (node ID -1, no host). A waiver covers it when the rule is the
// same and brokers names its node ID (or is "*", which also covers the
// cluster-wide ones), or hosts or groups match the host it names.

// MatchesProblem reports whether w covers the cluster finding p; groups
// are those of the report host p names (none when it names none).
func (w Waiver) MatchesProblem(p report.ClusterProblem, groups []string) bool {
	if w.Rule != p.Rule {
		return false
	}
	id := strconv.Itoa(int(p.NodeID))
	for _, b := range w.Brokers {
		if b == "*" || (p.NodeID >= 0 && b == id) {
			return true
		}
	}
	if p.Host == "" {
		return false
	}
	for _, h := range w.Hosts {
		if ok, _ := path.Match(h, p.Host); ok {
			return true
		}
	}
	for _, g := range w.Groups {
		if slices.Contains(groups, g) {
			return true
		}
	}
	return false
}

// clusterCovered counts r's cluster findings that wv covers and no
// waiver has yet (what an expired wv would have waived).
func clusterCovered(r *report.Report, wv Waiver) int {
	if r.Cluster == nil {
		return 0
	}
	groups := hostGroups(r)
	n := 0
	for _, p := range r.Cluster.Problems {
		if p.Waived == "" && wv.MatchesProblem(p, groups[p.Host]) {
			n++
		}
	}
	return n
}

// waiveCluster marks each cluster finding of r with what the first
// unexpired waiver of w that covers it says (file order, as for a host's
// findings); a waived one no longer counts toward --fail-on
// (Report.WorstFailure). One already waived is left as it is.
func waiveCluster(r *report.Report, w Waivers, now time.Time) {
	if r.Cluster == nil {
		return
	}
	groups := hostGroups(r)
	for i := range r.Cluster.Problems {
		p := &r.Cluster.Problems[i]
		if p.Waived != "" {
			continue
		}
		for _, wv := range w {
			if !wv.Expired(now) && wv.MatchesProblem(*p, groups[p.Host]) {
				p.Waived = wv.note()
				break
			}
		}
	}
}

// hostGroups is each report host's groups, by name.
func hostGroups(r *report.Report) map[string][]string {
	groups := make(map[string][]string, len(r.Hosts))
	for _, h := range r.Hosts {
		groups[h.Name] = h.Groups
	}
	return groups
}
