package report

import "github.com/kaudit/kaudit/audit/facts"

// Cluster is the Kafka cluster as it described itself (scan --bootstrap)
// and how its brokers map to the audited hosts. Nil when the scan did not
// ask the cluster.
type Cluster struct {
	ID         string `json:"cluster_id"`
	Bootstrap  string `json:"bootstrap"`
	Controller int32  `json:"controller"`
	// Brokers are the cluster's brokers in node id order, each with the
	// host it was matched to ("" when none) and the proof.
	Brokers []ClusterBroker `json:"brokers"`
	// ConfigsError is why the running brokers' settings could not be read
	// (no DESCRIBE_CONFIGS permission): the rules then use server.properties.
	ConfigsError string `json:"configs_error,omitempty"`
	// Quorum is the KRaft controller quorum (DescribeQuorum through a
	// broker); nil when it was not listed, QuorumError then says why.
	Quorum      *ClusterQuorum `json:"controller_quorum,omitempty"`
	QuorumError string         `json:"controller_quorum_error,omitempty"`
	// Problems are the cluster-level findings (broker-unaudited,
	// host-not-a-broker, broker-meta-mismatch, advertised-shared,
	// broker-version-mismatch).
	Problems []ClusterProblem `json:"problems"`
}

// ClusterBroker is one broker, its SSH host and the proof of the match.
type ClusterBroker struct {
	NodeID     int32       `json:"node_id"`
	Advertised string      `json:"advertised"`
	Rack       string      `json:"rack,omitempty"`
	Host       string      `json:"host,omitempty"`
	By         string      `json:"by,omitempty"` // map, name, address, meta.properties
	Proof      facts.Proof `json:"proof,omitempty"`
	Detail     string      `json:"detail,omitempty"`
	// Configs are the running broker's settings with their source.
	Configs map[string]ClusterConfig `json:"configs,omitempty"`
	// KafkaAtLeast is the Kafka release the broker's ApiVersions answer
	// proves it is at least ("3.7"; never an upper bound), "" when none;
	// KafkaEvidence is the proof ("Produce v10, first in 3.7"), or why
	// there is none.
	KafkaAtLeast  string `json:"kafka_at_least,omitempty"`
	KafkaEvidence string `json:"kafka_evidence,omitempty"`
}

// ClusterConfig is a running broker's setting and where it comes from
// (static, dynamic, dynamic-default, default).
type ClusterConfig struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// ClusterQuorum is the KRaft controller quorum: its leader (-1: none)
// and voters.
type ClusterQuorum struct {
	Leader int32         `json:"leader"`
	Voters []QuorumVoter `json:"voters"`
}

// QuorumVoter is one controller of the quorum and its listeners
// ("CONTROLLER=ctl-1:9093"), when the broker named them.
type QuorumVoter struct {
	ID        int32    `json:"id"`
	Endpoints []string `json:"endpoints,omitempty"`
}

// ClusterProblem is one cluster-level finding; Rule is its catalog id.
type ClusterProblem struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	NodeID   int32  `json:"node_id"`
	Host     string `json:"host,omitempty"`
	Message  string `json:"message"`
	// Waived is what the waiver that accepts this finding says ("by
	// FILE:LINE, until DATE, owner O: REASON"); "" when none does.
	// A waived finding no longer counts toward --fail-on.
	Waived string `json:"waived,omitempty"`
}

// waivedBy is "; waived by …" for a waived finding, or "".
func waivedBy(p ClusterProblem) string {
	if p.Waived == "" {
		return ""
	}
	return "; waived " + p.Waived
}

// Label is the finding's severity, or "waived (was SEVERITY)".
func (p ClusterProblem) Label() string {
	if p.Waived != "" {
		return "waived (was " + p.Severity + ")"
	}
	return p.Severity
}
