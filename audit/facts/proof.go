package facts

// Proof says whether a Kafka broker's mapping to an SSH host was proven by
// the host's meta.properties (discover.Prove decides it; a report's
// ClusterBroker carries it).
type Proof string

// The states of a broker-to-host mapping.
const (
	ProofProven       Proof = "proven"       // every meta.properties names this cluster's id and the broker's node id
	ProofContradicted Proof = "contradicted" // a meta.properties names another cluster or node
	ProofUnproven     Proof = "unproven"     // nothing proves it: no meta.properties read, an id absent, or a node id the cluster gave twice
	ProofLeftOut      Proof = "left-out"     // matched to an inventory host this run does not audit (--limit)
)
