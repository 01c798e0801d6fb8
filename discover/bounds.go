package discover

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The most a cluster's replies may carry. Everything a cluster sends is
// untrusted: a reply over a bound is refused (Refused, naming the size)
// before anything is made of it, so that a hostile or broken cluster can
// neither turn into thousands of SSH connections nor multiply its reply
// into every finding, report and metric series.
const (
	// MaxBrokers is the most brokers a cluster may advertise: the
	// largest Kafka clusters run a few thousand; each broker is a host
	// kaudit connects to and a Prometheus series per cluster.
	MaxBrokers = 5000
	// MaxClusterID bounds the cluster id: Kafka's is a 22-character
	// base64 UUID (Uuid.randomUuid, KRaft and ZooKeeper mode alike).
	MaxClusterID = 64
	// MaxHostName and MaxLabel are DNS's bounds on a host name and on
	// each of its dot-separated labels (RFC 1035 2.3.4).
	MaxHostName = 253
	MaxLabel    = 63
	// MaxRack bounds a broker's broker.rack.
	MaxRack = 255
	// MaxConfigValue bounds a running broker's setting: a larger one is
	// not used (the file's value is judged) and ConfigsError names it.
	MaxConfigValue = 4096
	// MaxVoters bounds the KRaft controller quorum a broker lists.
	MaxVoters = 64
)

// Refused is the kind of a reply over one of the bounds above.
const Refused ErrorKind = "refused"

// refuse is the error for a reply over a bound: what, its size, the bound.
func refuse(bootstrap []string, what string) error {
	return &Error{Kind: Refused, Bootstrap: strings.Join(bootstrap, ","),
		Err:  fmt.Errorf("the cluster's Metadata reply is refused: %s", what),
		Hint: "no Kafka cluster sends this: is the bootstrap a Kafka broker? nothing was audited or changed; audit the hosts from an inventory without --bootstrap"}
}

// checkReply refuses a cluster whose Metadata reply is over a bound.
func checkReply(o Options, c *Cluster) error {
	switch {
	case len(c.Brokers) > MaxBrokers:
		return refuse(o.Bootstrap, fmt.Sprintf("it advertises %d brokers (kaudit takes at most %d per cluster, each a host it would connect to)", len(c.Brokers), MaxBrokers))
	case len(c.ID) > MaxClusterID:
		return refuse(o.Bootstrap, fmt.Sprintf("its cluster id is %d bytes (a Kafka cluster id is 22 characters; kaudit takes at most %d)", len(c.ID), MaxClusterID))
	}
	for _, b := range c.Brokers {
		if why := hostNameTooLong(b.Host); why != "" {
			return refuse(o.Bootstrap, fmt.Sprintf("broker %d advertises %s", b.NodeID, why))
		}
		if len(b.Rack) > MaxRack {
			return refuse(o.Bootstrap, fmt.Sprintf("broker %d's rack is %d bytes (kaudit takes at most %d)", b.NodeID, len(b.Rack), MaxRack))
		}
	}
	return nil
}

// hostNameTooLong says why host is longer than DNS allows, or "".
func hostNameTooLong(host string) string {
	if len(host) > MaxHostName {
		return fmt.Sprintf("a host name of %d bytes (DNS allows %d)", len(host), MaxHostName)
	}
	for _, l := range strings.Split(host, ".") {
		if len(l) > MaxLabel {
			return fmt.Sprintf("a host name with a label of %d bytes (DNS allows %d per label)", len(l), MaxLabel)
		}
	}
	return ""
}

// configTooLong says why a running setting's value is not used, or "".
func configTooLong(node int32, key, v string) string {
	if len(v) <= MaxConfigValue {
		return ""
	}
	return fmt.Sprintf("broker %d's %s is %d bytes (kaudit reads at most %d): not used, the file's value is judged", node, key, len(v), MaxConfigValue)
}

// quorumTooLarge says why a DescribeQuorum answer is over the bounds, or "".
func quorumTooLarge(resp *kmsg.DescribeQuorumResponse) string {
	if n := len(resp.Topics[0].Partitions[0].CurrentVoters); n > MaxVoters {
		return fmt.Sprintf("it lists %d voters (kaudit takes at most %d)", n, MaxVoters)
	}
	if len(resp.Nodes) > MaxVoters {
		return fmt.Sprintf("it lists %d nodes (kaudit takes at most %d)", len(resp.Nodes), MaxVoters)
	}
	for _, n := range resp.Nodes {
		if len(n.Listeners) > MaxVoters {
			return fmt.Sprintf("node %d has %d listeners (kaudit takes at most %d)", n.NodeID, len(n.Listeners), MaxVoters)
		}
		for _, l := range n.Listeners {
			if why := hostNameTooLong(l.Host); why != "" {
				return fmt.Sprintf("node %d's listener has %s", n.NodeID, why)
			}
			if len(l.Name) > MaxLabel*4 {
				return fmt.Sprintf("node %d's listener name is %d bytes", n.NodeID, len(l.Name))
			}
		}
	}
	return ""
}
