package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/words"
)

// clusterBrokerLine is one broker of the cluster section, plain text (each
// format escapes it): "broker 1 kafka-1.internal:9092 → kafka-1 (name, proven)".
func clusterBrokerLine(b ClusterBroker) string {
	s := fmt.Sprintf("broker %d %s", b.NodeID, b.Advertised)
	if b.Host == "" {
		return s + " → no audited host"
	}
	if b.Proof == facts.ProofLeftOut {
		return fmt.Sprintf("%s → %s (by %s; left out of this run by --limit: not audited)", s, b.Host, b.By)
	}
	return fmt.Sprintf("%s → %s (by %s, %s)", s, b.Host, b.By, b.Proof)
}

// clusterConfigLine is the running broker's settings with their source,
// in key order: "num.network.threads=8 (static), …"; "" when none.
func clusterConfigLine(b ClusterBroker) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(b.Configs)) {
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", k, b.Configs[k].Value, b.Configs[k].Source))
	}
	return strings.Join(parts, ", ")
}

// clusterKafkaLine is the Kafka release the broker's ApiVersions answer
// proves it is at least, with the proof: "Kafka ≥ 3.7 (Produce v10, first
// in 3.7)"; without a bound, why: "Kafka version not proven: …".
func clusterKafkaLine(b ClusterBroker) string {
	if b.KafkaAtLeast == "" {
		if b.KafkaEvidence == "" {
			return ""
		}
		return "Kafka version not proven: " + b.KafkaEvidence
	}
	return fmt.Sprintf("Kafka ≥ %s (%s)", b.KafkaAtLeast, b.KafkaEvidence)
}

// clusterQuorumLine is the KRaft controller quorum: "controller quorum:
// leader 3001; voters 3000 (CONTROLLER=ctl-0:9093), 3001, …", or why it
// is not listed.
func clusterQuorumLine(c *Cluster) string {
	if c.Quorum == nil {
		if c.QuorumError == "" {
			return ""
		}
		return "controller quorum not listed: " + c.QuorumError
	}
	voters := make([]string, 0, len(c.Quorum.Voters))
	for _, v := range c.Quorum.Voters {
		s := fmt.Sprint(v.ID)
		if len(v.Endpoints) > 0 {
			s += " (" + strings.Join(v.Endpoints, ", ") + ")"
		}
		voters = append(voters, s)
	}
	return fmt.Sprintf("controller quorum: leader %d; voters %s", c.Quorum.Leader, strings.Join(voters, ", "))
}

// clusterHeading is the section's first line.
func clusterHeading(c *Cluster) string {
	s := fmt.Sprintf("cluster %s via %s: %d brokers, controller %d", c.ID, c.Bootstrap, len(c.Brokers), c.Controller)
	if c.ConfigsError != "" {
		s += "; running settings not read: " + c.ConfigsError
	}
	return s
}

// clusterBrokerCounts is the brokers counted by how they map to hosts,
// for a grouped report: "1000 brokers: 990 proven, 6 unproven, 4 no
// audited host".
func clusterBrokerCounts(c *Cluster) string {
	counts := map[string]int{}
	for _, b := range c.Brokers {
		switch {
		case b.Host == "":
			counts["no audited host"]++
		case b.Proof == facts.ProofLeftOut:
			counts["left out of this run (--limit)"]++
		default:
			counts[string(b.Proof)]++
		}
	}
	parts := make([]string, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return fmt.Sprintf("%s: %s", words.Count(len(c.Brokers), "broker", "brokers"), strings.Join(parts, ", "))
}

// clusterProblemLines are the cluster-level findings grouped by rule and
// label, for a grouped report: "critical broker-unaudited on 4 brokers:
// MESSAGE (and 3 more)", the first one's message.
func clusterProblemLines(c *Cluster) []string {
	idx := map[string]int{}
	var out []string
	var n []int
	for _, p := range c.Problems {
		k := p.Label() + " " + p.Rule
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, k+": "+p.Message+waivedBy(p))
			n = append(n, 0)
		}
		n[i]++
	}
	for i := range out {
		if n[i] > 1 {
			out[i] += fmt.Sprintf(" (and %d more like it)", n[i]-1)
		}
	}
	return out
}
