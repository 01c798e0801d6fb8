package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// The one answer to "which Kafka cluster is this host a broker of", shared
// by the restart verdict (whatif) and the grouped report: the cluster
// scan --bootstrap proved, else the cluster.id its meta.properties name,
// else its inventory groups.

// ClusterPrefix names a group that is a Kafka cluster by its id (the
// cluster's own or meta.properties'), not an inventory group.
const ClusterPrefix = "cluster "

// Ungrouped is the group of a host with no cluster and no inventory group.
const Ungrouped = "(ungrouped)"

// ProvenClusters maps each host rc proves a broker of it (meta.properties
// matched) to rc's cluster id; empty when rc is nil.
func ProvenClusters(rc *Cluster) map[string]string {
	proven := map[string]string{}
	if rc == nil {
		return proven
	}
	for _, b := range rc.Brokers {
		if b.Host != "" && b.Proof == facts.ProofProven {
			proven[b.Host] = rc.ID
		}
	}
	return proven
}

// HostClusters are the groups h belongs to: the Kafka cluster it is proven
// to belong to (proven, from ProvenClusters), else the cluster its
// meta.properties names (one id in every log directory), else its
// inventory groups, else Ungrouped.
func HostClusters(h *Host, proven map[string]string) []string {
	return HostClustersOf(h, h.Facts, proven)
}

// HostClustersOf is HostClusters with h's facts given apart: f is
// h.Facts, or what the fleet pass kept of them (a spooled scan).
func HostClustersOf(h *Host, f *facts.Facts, proven map[string]string) []string {
	if id := proven[h.Name]; id != "" {
		return []string{ClusterPrefix + id}
	}
	if id := MetaClusterID(f); id != "" {
		return []string{ClusterPrefix + id}
	}
	if len(h.Groups) == 0 {
		return []string{Ungrouped}
	}
	return h.Groups
}

// MetaClusterID is the cluster.id every meta.properties of f names; ""
// when none is read or two disagree.
func MetaClusterID(f *facts.Facts) string {
	if f == nil || f.Kafka == nil {
		return ""
	}
	id := ""
	for _, d := range f.Kafka.LogDirs {
		if d.Meta == nil || d.Meta.ClusterID == "" {
			continue
		}
		if id != "" && id != d.Meta.ClusterID {
			return ""
		}
		id = d.Meta.ClusterID
	}
	return id
}

// ClusterCounts is how many of hosts each cluster has, clusters sorted by
// name: "prod-1 40, prod-2 47"; clusters maps a host to its clusters
// (HostClusters), a host it lacks counts as Ungrouped.
func ClusterCounts(hosts []string, clusters map[string][]string) string {
	counts := map[string]int{}
	for _, h := range hosts {
		cs := clusters[h]
		if len(cs) == 0 {
			cs = []string{Ungrouped}
		}
		for _, c := range cs {
			counts[c]++
		}
	}
	parts := make([]string, 0, len(counts))
	for _, c := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", c, counts[c]))
	}
	return strings.Join(parts, ", ")
}

// ClustersByHost maps each host of r to its clusters (HostClusters).
func ClustersByHost(r *Report) map[string][]string {
	proven := ProvenClusters(r.Cluster)
	out := make(map[string][]string, len(r.Hosts))
	for i := range r.Hosts {
		out[r.Hosts[i].Name] = HostClusters(&r.Hosts[i], proven)
	}
	return out
}

// BrokerClusters is ClustersByHost for the broker hosts of r: a client
// host (a producer or consumer of the clients group) is in no cluster and
// not in the map. The restart verdict and fix --apply's rollout group by it.
func BrokerClusters(r *Report) map[string][]string {
	proven := ProvenClusters(r.Cluster)
	out := make(map[string][]string, len(r.Hosts))
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Facts != nil && h.Facts.Role == facts.RoleClient {
			continue
		}
		out[h.Name] = HostClusters(h, proven)
	}
	return out
}
