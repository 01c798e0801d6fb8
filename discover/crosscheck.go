package discover

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Host is an inventory host of the broker group, with its gathered facts
// (nil when it was not audited). A LeftOut host is in the inventory but
// not in this run (--limit): a broker matched to it is named, never
// proven, and is no broker-unaudited; the host itself is not judged.
type Host struct {
	Name    string
	Address string
	Facts   *facts.Facts
	LeftOut bool
}

// Mapping is one broker matched to an SSH host.
type Mapping struct {
	NodeID     int32       `json:"node_id"`
	Advertised string      `json:"advertised"`
	Host       string      `json:"host"`
	By         string      `json:"by"` // "map", "name", "address" or "meta.properties"
	Proof      facts.Proof `json:"proof"`
	Detail     string      `json:"detail"`
}

// ProblemKind names a fleet-level disagreement between the cluster and
// the inventory.
type ProblemKind string

// The problems Map reports; each is a catalog rule id.
const (
	BrokerUnaudited  ProblemKind = "broker-unaudited"        // a broker of the cluster that no audited host is
	HostNotABroker   ProblemKind = "host-not-a-broker"       // an inventory broker host that is no broker of this cluster
	MetaContradicts  ProblemKind = "broker-meta-mismatch"    // a host's meta.properties contradicts its mapping
	AdvertisedShared ProblemKind = "advertised-shared"       // the brokers advertise one address: a load balancer or NAT
	PortUnbound      ProblemKind = "advertised-port-unbound" // no socket on the broker's host listens on its advertised port: NAT or a port forward
	NodeIDShared     ProblemKind = "broker-id-shared"        // two brokers advertise one node id: neither is proven
)

// Problem is one finding of the cross-check.
type Problem struct {
	Kind    ProblemKind `json:"kind"`
	NodeID  int32       `json:"node_id"` // -1 when it concerns no broker
	Host    string      `json:"host,omitempty"`
	Message string      `json:"message"`
}

// Map matches the cluster's brokers to the inventory's hosts and checks
// each match against the host's meta.properties. A broker is matched, in
// this order, by explicit (node id → host name, a map file or a host
// template expanded by the caller), by a host whose name or address is
// exactly the advertised host, or by a host whose meta.properties names
// this cluster and the broker's node id. Nothing else is tried: a near
// name is a guess.
func Map(c *Cluster, hosts []Host, explicit map[int32]string) ([]Mapping, []Problem) {
	var maps []Mapping
	probs := sharedIDs(c)
	used := map[string]bool{}
	for _, b := range c.Brokers {
		h, by := match(b, hosts, explicit, used, c)
		if h == nil {
			probs = append(probs, Problem{Kind: BrokerUnaudited, NodeID: b.NodeID,
				Message: fmt.Sprintf("broker %d (%s) is in cluster %s but in no inventory: nothing about it was checked", b.NodeID, b.Addr(), c.ID)})
			continue
		}
		used[h.Name] = true
		m := Mapping{NodeID: b.NodeID, Advertised: b.Addr(), Host: h.Name, By: by}
		if h.LeftOut {
			m.Proof, m.Detail = facts.ProofLeftOut, "an inventory host this run does not audit (--limit): nothing about the broker was checked"
			maps = append(maps, m)
			continue
		}
		m.Proof, m.Detail = Prove(c, b.NodeID, h.Facts)
		if m.Proof == facts.ProofContradicted {
			probs = append(probs, Problem{Kind: MetaContradicts, NodeID: b.NodeID, Host: h.Name,
				Message: fmt.Sprintf("host %s was matched to broker %d (%s, by %s) but %s", h.Name, b.NodeID, b.Addr(), by, m.Detail)})
		} else if p, ok := portUnbound(b, h); ok && m.Proof == facts.ProofProven {
			probs = append(probs, p)
		}
		maps = append(maps, m)
	}
	for _, h := range hosts {
		if !used[h.Name] && !h.LeftOut {
			probs = append(probs, notABroker(c.ID, h))
		}
	}
	if p, ok := shared(c); ok {
		probs = append(probs, p)
	}
	return maps, probs
}

func match(b Broker, hosts []Host, explicit map[int32]string, used map[string]bool, c *Cluster) (*Host, string) {
	if name, ok := explicit[b.NodeID]; ok {
		return find(hosts, used, func(h Host) bool { return h.Name == name }), "map"
	}
	if h := find(hosts, used, func(h Host) bool { return strings.EqualFold(h.Name, b.Host) }); h != nil {
		return h, "name"
	}
	if h := find(hosts, used, func(h Host) bool { return h.Address != "" && strings.EqualFold(h.Address, b.Host) }); h != nil {
		return h, "address"
	}
	return find(hosts, used, func(h Host) bool { return metaSays(c, h.Facts, b.NodeID) }), "meta.properties"
}

func find(hosts []Host, used map[string]bool, ok func(Host) bool) *Host {
	for i := range hosts {
		if !used[hosts[i].Name] && ok(hosts[i]) {
			return &hosts[i]
		}
	}
	return nil
}

// metaSays reports whether f's meta.properties prove it broker id of
// the cluster (Prove).
func metaSays(c *Cluster, f *facts.Facts, id int32) bool {
	p, _ := Prove(c, id, f)
	return p == facts.ProofProven
}

func notABroker(cluster string, h Host) Problem {
	p := Problem{Kind: HostNotABroker, NodeID: -1, Host: h.Name}
	ms := metas(h.Facts)
	switch {
	case h.Facts == nil:
		p.Message = fmt.Sprintf("host %s is in the broker group but matches no broker of cluster %s, and it was not audited: cannot tell what it is", h.Name, cluster)
	case h.Facts.Kafka == nil:
		p.Message = fmt.Sprintf("host %s is in the broker group but runs no Kafka broker and matches no broker of cluster %s", h.Name, cluster)
	case len(ms) == 0:
		p.Message = fmt.Sprintf("host %s is in the broker group but matches no advertised broker of cluster %s, and no meta.properties could be read to say which broker it is", h.Name, cluster)
	default:
		for _, d := range slices.Sorted(maps.Keys(ms)) {
			m := ms[d]
			p.Message = fmt.Sprintf("host %s is in the broker group but is no broker of cluster %s: %s/meta.properties says cluster %s node %d", h.Name, cluster, d, orNone(m.ClusterID), m.ID())
			if m.ClusterID != cluster {
				break
			}
		}
	}
	return p
}

// sharedIDs reports each node id the cluster lists for more than one
// broker: a broker's node id is unique in a cluster, so one of them
// lies, and no meta.properties can say which host is which (Prove).
func sharedIDs(c *Cluster) []Problem {
	addrs := map[int32][]string{}
	var order []int32
	for _, b := range c.Brokers {
		if addrs[b.NodeID] == nil {
			order = append(order, b.NodeID)
		}
		addrs[b.NodeID] = append(addrs[b.NodeID], b.Addr())
	}
	var probs []Problem
	for _, id := range order {
		if a := addrs[id]; len(a) > 1 {
			probs = append(probs, Problem{Kind: NodeIDShared, NodeID: id,
				Message: fmt.Sprintf("%d brokers of cluster %s advertise node id %d (%s): a node id is unique in a cluster, so the answer is wrong or hostile; neither host is proven, and kaudit changes, probes and rolls back neither", len(a), c.ID, id, strings.Join(a, ", "))})
		}
	}
	return probs
}

// shared reports brokers that all advertise one host: a load balancer or
// a NAT address, which says nothing about which host is which broker.
func shared(c *Cluster) (Problem, bool) {
	if len(c.Brokers) < 2 {
		return Problem{}, false
	}
	for _, b := range c.Brokers[1:] {
		if !strings.EqualFold(b.Host, c.Brokers[0].Host) {
			return Problem{}, false
		}
	}
	return Problem{Kind: AdvertisedShared, NodeID: -1, Message: fmt.Sprintf("all %d brokers of cluster %s advertise the host %s: a load balancer or NAT in front of them; the advertised names do not say which host is which broker, so only meta.properties or a map file can", len(c.Brokers), c.ID, c.Brokers[0].Host)}, true
}

// portUnbound reports a broker whose host, as its listening sockets were
// read, listens on no socket at the broker's advertised port: the clients
// reach it through a NAT or a port forward, and what kaudit judged on the
// host's own ports is not the path they take. Nothing is claimed when the
// host's listeners were not read.
func portUnbound(b Broker, h *Host) (Problem, bool) {
	f := h.Facts
	if f == nil || f.Listeners == nil {
		return Problem{}, false
	}
	if _, bad := f.Sections[facts.SecListeners]; bad && len(f.Listeners) == 0 {
		return Problem{}, false
	}
	seen := map[int]bool{}
	var ports []int
	for _, l := range f.Listeners {
		if l.Port == int(b.Port) {
			return Problem{}, false
		}
		if !seen[l.Port] {
			seen[l.Port] = true
			ports = append(ports, l.Port)
		}
	}
	sort.Ints(ports)
	on := "no TCP port at all"
	if len(ports) > 0 {
		words := make([]string, len(ports))
		for i, p := range ports {
			words[i] = strconv.Itoa(p)
		}
		on = "only " + strings.Join(words, ", ")
	}
	return Problem{Kind: PortUnbound, NodeID: b.NodeID, Host: h.Name,
		Message: fmt.Sprintf("broker %d advertises %s, but no socket on host %s listens on port %d (it listens on %s): clients reach it through a NAT or a port forward, which kaudit does not audit", b.NodeID, b.Addr(), h.Name, b.Port, on)}, true
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
