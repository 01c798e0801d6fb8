package discover

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Prove checks the host's meta.properties (f) against broker node of
// cluster c: facts.ProofProven only when c has an id, lists node once, and every
// readable meta.properties names both. An absent id proves nothing (a
// cluster without an id, a meta.properties without cluster.id or
// node.id/broker.id): facts.ProofUnproven, as is a node id the cluster lists for
// two brokers, which names neither.
func Prove(c *Cluster, node int32, f *facts.Facts) (facts.Proof, string) {
	if c.ID == "" {
		return facts.ProofUnproven, "the cluster gave no cluster id, so no meta.properties can prove a host is one of its brokers"
	}
	if n := c.count(node); n > 1 {
		return facts.ProofUnproven, fmt.Sprintf("the cluster lists node id %d for %d brokers, so the id says which host is neither", node, n)
	}
	ms := metas(f)
	if len(ms) == 0 {
		return facts.ProofUnproven, "no meta.properties could be read in its log.dirs (the kafka-meta section says why): the match is not proven"
	}
	dirs := slices.Sorted(maps.Keys(ms))
	var absent string
	for _, d := range dirs {
		m := ms[d]
		switch {
		case m.ClusterID != "" && m.ClusterID != c.ID, m.ID() >= 0 && m.ID() != int(node):
			return facts.ProofContradicted, fmt.Sprintf("%s/meta.properties says cluster %s node %s", d, orNone(m.ClusterID), idOrNone(m.ID()))
		case absent == "" && (m.ClusterID == "" || m.ID() < 0):
			absent = fmt.Sprintf("%s/meta.properties says cluster %s node %s: an absent id proves nothing", d, orNone(m.ClusterID), idOrNone(m.ID()))
		}
	}
	if absent != "" {
		return facts.ProofUnproven, absent
	}
	return facts.ProofProven, fmt.Sprintf("meta.properties in %s says cluster %s node %d", strings.Join(dirs, ", "), c.ID, node)
}

// count is how many of c's brokers have node id.
func (c *Cluster) count(node int32) int {
	n := 0
	for _, b := range c.Brokers {
		if b.NodeID == node {
			n++
		}
	}
	return n
}

// Foreign is the first cluster id other than cluster that a readable
// meta.properties of f names (log.dirs in order), "" when none does.
func Foreign(cluster string, f *facts.Facts) string {
	ms := metas(f)
	for _, d := range slices.Sorted(maps.Keys(ms)) {
		if id := ms[d].ClusterID; id != "" && id != cluster {
			return id
		}
	}
	return ""
}

// Standing is whether kaudit may act on a host, as its cluster
// proves it: change it (fix --apply), send it probe traffic, roll it
// back. It is the one home of that decision; Refusal says why not.
type Standing struct {
	Cluster string // the cluster's id
	// Named: kaudit knows the host only because the cluster advertised
	// it (no inventory): only facts.ProofProven lets kaudit act on it.
	Named bool
	Proof facts.Proof
	Why   string // what Prove found
	// Foreign is another cluster id the host's meta.properties names
	// (an inventory host is refused for it unless Accepted).
	Foreign  string
	Accepted bool // the person accepted Foreign for this host by name (--accept-cluster-mismatch)
}

// Stand is the standing of a host toward cluster c: named says the host
// is known only as broker node of c (no inventory); an inventory host
// passes node -1 and is judged by Foreign alone.
func Stand(c *Cluster, node int32, named bool, f *facts.Facts) Standing {
	s := Standing{Cluster: c.ID, Named: named, Foreign: Foreign(c.ID, f)}
	if named {
		s.Proof, s.Why = Prove(c, node, f)
	}
	return s
}

// Acts reports whether kaudit may act on the host.
func (s Standing) Acts() bool {
	if s.Named {
		return s.Proof == facts.ProofProven
	}
	return s.Foreign == "" || s.Accepted
}

// Refusal is why kaudit does not act on the host ("" when it does):
// "not proven a broker of cluster X (why)".
func (s Standing) Refusal() string {
	switch {
	case s.Acts():
		return ""
	case s.Named:
		return fmt.Sprintf("not proven a broker of cluster %s (%s)", orNone(s.Cluster), s.Why)
	}
	return fmt.Sprintf("not proven a broker of cluster %s (its meta.properties names cluster %s; --accept-cluster-mismatch HOST accepts it)", orNone(s.Cluster), s.Foreign)
}

func metas(f *facts.Facts) map[string]*facts.MetaProperties {
	m := map[string]*facts.MetaProperties{}
	if f == nil || f.Kafka == nil {
		return m
	}
	for _, d := range f.Kafka.LogDirs {
		if d.Meta != nil {
			m[d.Path] = d.Meta
		}
	}
	return m
}

func idOrNone(id int) string {
	if id < 0 {
		return "(none)"
	}
	return fmt.Sprint(id)
}
