package rules

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"unique"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/words"
)

// FleetHost is one host as the fleet pass sees it.
type FleetHost struct {
	Name    string
	Address string       // inventory address: an IP literal counts as one of the host's addresses
	Facts   *facts.Facts // nil: the host was not audited
	// Groups are the groups whose brokers are peers of this host: the
	// Kafka cluster it is proven or declared to belong to, else its
	// inventory groups (whatif's restart groups, the one home of that
	// choice).
	Groups []string
}

// fleetEvaluator is a fleet rule's check: the findings of every host
// (aligned with hosts), a pure function of the fleet's facts.
type fleetEvaluator func(r Rule, hosts []FleetHost) []Finding

// fleetEvaluators maps every catalog rule of scope fleet to its check.
var fleetEvaluators = map[string]fleetEvaluator{
	RuleClientWscaleMismatch: func(_ Rule, hosts []FleetHost) []Finding { return evalClientWscaleMismatch(hosts) },
	RulePeerConsistency:      evalPeerConsistency,
}

// EvaluateFleet runs the fleet rules (catalog scope fleet) over every
// host's facts once all are gathered: the result has, for each host in
// order, one finding per fleet rule in catalog order. A host without facts
// gets unknown. It never changes what Evaluate found; ApplyFleet merges.
func EvaluateFleet(hosts []FleetHost) [][]Finding { return shipped.EvaluateFleet(hosts) }

// EvaluateFleet runs the set's fleet rules as the package's EvaluateFleet
// runs the shipped ones.
func (s *Set) EvaluateFleet(hosts []FleetHost) [][]Finding {
	out := make([][]Finding, len(hosts))
	for _, r := range s.rules {
		fn := fleetEvaluators[r.ID]
		if r.Scope != ScopeFleet || fn == nil {
			continue
		}
		fs := safeFleet(fn, r, hosts)
		for i := range hosts {
			fd := fs[i]
			if hosts[i].Facts == nil {
				fd = Finding{Status: Unknown, Reason: "no facts gathered for this host"}
			}
			fd.Rule, fd.Title = r.ID, r.Title
			fd.Severity = cmp.Or(fd.Severity, r.Severity)
			out[i] = append(out[i], fd)
		}
	}
	// Equal texts and fixes are held once (the same "align with peers"
	// fix on every broker that differs alike).
	in := NewInterner()
	for _, fs := range out {
		in.Findings(fs)
	}
	return out
}

func safeFleet(fn fleetEvaluator, r Rule, hosts []FleetHost) (fs []Finding) {
	defer func() {
		if v := recover(); v != nil {
			fs = make([]Finding, len(hosts))
			for i := range fs {
				fs[i] = Finding{Status: Error, Reason: fmt.Sprintf("rule %s could not be evaluated (kaudit bug): %v", r.ID, v)}
			}
		}
	}()
	return fn(r, hosts)
}

// ApplyFleet returns findings with each fleet rule's finding replaced by
// the one in fleet (same rule ID); the order and the other findings stay.
func ApplyFleet(findings, fleet []Finding) []Finding {
	out := append([]Finding(nil), findings...)
	for _, fd := range fleet {
		for i := range out {
			if out[i].Rule == fd.Rule {
				out[i] = fd
			}
		}
	}
	return out
}

// tuple is a connection's 4-tuple seen from the broker: its own address
// and port, then the client's.
type tuple struct{ broker, client netip.AddrPort }

func addrPort(addr string, port int) (netip.AddrPort, bool) {
	a, ok := hostAddr(addr)
	if !ok || port <= 0 || port > 65535 {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, uint16(port)), true
}

// brokerSide is what the matcher knows of the brokers: every broker's
// Kafka ports and the addresses that belong to each broker.
type brokerSide struct {
	addrs map[netip.Addr]int // address -> host index
	ports map[int]bool       // every broker's Kafka ports
}

func isBroker(h FleetHost) bool { return h.Facts != nil && h.Facts.Role != facts.RoleClient }
func isClient(h FleetHost) bool { return h.Facts != nil && h.Facts.Role == facts.RoleClient }

func indexBrokers(hosts []FleetHost) brokerSide {
	b := brokerSide{addrs: map[netip.Addr]int{}, ports: map[int]bool{}}
	for i, h := range hosts {
		if !isBroker(h) {
			continue
		}
		ports := KafkaPorts(h.Facts)
		for _, p := range ports {
			b.ports[p] = true
		}
		if a, ok := hostAddr(h.Address); ok && !a.IsLoopback() {
			b.addrs[a] = i
		}
		for _, l := range h.Facts.Listeners {
			if a, ok := hostAddr(l.Addr); ok && !a.IsUnspecified() && !a.IsLoopback() && slices.Contains(ports, l.Port) {
				b.addrs[a] = i
			}
		}
		for _, c := range h.Facts.Conns {
			if a, ok := hostAddr(c.Local); ok && !a.IsLoopback() && slices.Contains(ports, c.LocalPort) {
				b.addrs[a] = i
			}
		}
	}
	return b
}

// match is one client connection matched with its broker side.
type match struct {
	client string
	t      tuple
	snd    int // the client's snd_wscale: what the broker's SYN-ACK advertised
	rcv    int // the broker's rcv_wscale: what it really uses
}

func (m match) mismatched() bool { return m.snd != m.rcv }

// clientConn is one client connection to a Kafka port, waiting for its
// broker side.
type clientConn struct {
	host    int
	c       facts.Conn
	matched bool
	dup     string // another client host shows the same 4-tuple: never matched
}

// fleetMatches pairs every client connection to a Kafka port with the
// broker connection of the same 4-tuple. Per broker: the matches and the
// client connections that went to one of its addresses but could not be
// matched; per client host: its connections and the ones no broker owns.
// Memory grows with the client hosts' connections, not the brokers'.
type fleetMatches struct {
	matched   map[int][]match
	unmatched map[int][]string
	clients   map[int]map[string]bool // broker -> client hosts matched
	own       map[int][2]int          // client host -> (connections to Kafka ports, matched)
	nowhere   map[int][]string        // client host -> connections to no audited broker
}

func matchFleet(hosts []FleetHost) fleetMatches {
	m := fleetMatches{matched: map[int][]match{}, unmatched: map[int][]string{}, clients: map[int]map[string]bool{}, own: map[int][2]int{}, nowhere: map[int][]string{}}
	b := indexBrokers(hosts)
	want := clientTuples(hosts, b)
	for bi, h := range hosts {
		if !isBroker(h) || len(want) == 0 {
			continue
		}
		for _, c := range h.Facts.Conns {
			local, ok1 := addrPort(c.Local, c.LocalPort)
			peer, ok2 := addrPort(c.Peer, c.PeerPort)
			cc, found := want[tuple{local, peer}]
			if !ok1 || !ok2 || !found || cc.matched || cc.dup != "" {
				continue
			}
			cc.matched = true
			m.matched[bi] = append(m.matched[bi], match{client: hosts[cc.host].Name, t: tuple{local, peer}, snd: cc.c.SndWscale, rcv: c.RcvWscale})
			if m.clients[bi] == nil {
				m.clients[bi] = map[string]bool{}
			}
			m.clients[bi][hosts[cc.host].Name] = true
		}
	}
	m.placeUnmatched(hosts, b, want)
	return m
}

// clientTuples indexes the client hosts' connections to a Kafka port by
// their 4-tuple as the broker would see it.
func clientTuples(hosts []FleetHost, b brokerSide) map[tuple]*clientConn {
	out := map[tuple]*clientConn{}
	for ci, h := range hosts {
		if !isClient(h) {
			continue
		}
		for _, c := range h.Facts.Conns {
			local, ok1 := addrPort(c.Local, c.LocalPort)
			peer, ok2 := addrPort(c.Peer, c.PeerPort)
			if !ok1 || !ok2 || !b.ports[c.PeerPort] {
				continue // not to a Kafka port
			}
			k := tuple{peer, local}
			if prev, seen := out[k]; seen && prev.host != ci {
				prev.dup = h.Name
				continue
			}
			out[k] = &clientConn{host: ci, c: c}
		}
	}
	return out
}

// placeUnmatched counts each client host's connections and says, for the
// ones no broker listed, which broker they went to (by address) or that
// none of the audited brokers has that address.
func (m *fleetMatches) placeUnmatched(hosts []FleetHost, b brokerSide, want map[tuple]*clientConn) {
	byClient := func(a, b tuple) int { return strings.Compare(a.client.String(), b.client.String()) }
	for _, k := range slices.SortedFunc(maps.Keys(want), byClient) {
		cc := want[k]
		n := m.own[cc.host]
		n[0]++
		if cc.matched {
			n[1]++
		}
		m.own[cc.host] = n
		if cc.matched {
			continue
		}
		desc := fmt.Sprintf("%s %s → %s", hosts[cc.host].Name, k.client, k.broker)
		owner, known := b.addrs[k.broker.Addr()]
		switch {
		case cc.dup != "" && known:
			m.unmatched[owner] = append(m.unmatched[owner], desc+": the same 4-tuple is on client host "+cc.dup+" too (NATs with the same private addresses): not matched")
		case known:
			m.unmatched[owner] = append(m.unmatched[owner], desc+": "+unmatchedWhy(hosts[owner].Facts))
		default:
			m.nowhere[cc.host] = append(m.nowhere[cc.host], desc+": no audited broker has this address (a virtual IP, DNAT or load balancer, or a broker outside the inventory)")
		}
	}
}

func unmatchedWhy(f *facts.Facts) string {
	if f.ConnsTotal > len(f.Conns) {
		return fmt.Sprintf("not among the broker's connections: beyond the %s it listed of %s, or rewritten by a NAT on the way", words.Thousands(len(f.Conns)), words.Thousands(f.ConnsTotal))
	}
	return "the broker has no connection with this 4-tuple: a NAT on the way rewrites the client's address or port"
}

func scale(n int) string {
	if n < 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

func evalClientWscaleMismatch(hosts []FleetHost) []Finding {
	m := matchFleet(hosts)
	nClients := 0
	for _, h := range hosts {
		if isClient(h) {
			nClients++
		}
	}
	out := make([]Finding, len(hosts))
	for i, h := range hosts {
		switch {
		case h.Facts == nil:
		case isClient(h):
			out[i] = clientSide(m, i)
		default:
			out[i] = brokerMismatch(h, m, i, nClients)
		}
	}
	return out
}

func clientSide(m fleetMatches, i int) Finding {
	n := m.own[i]
	r := fmt.Sprintf("client host: its %d connections to the brokers' Kafka ports are judged on the brokers (%d matched)", n[0], n[1])
	fd := skip(r)
	fd.Evidence = capList(m.nowhere[i], 20)
	return fd
}

func brokerMismatch(h FleetHost, m fleetMatches, i, nClients int) Finding {
	c := &evalCtx{f: h.Facts}
	switch {
	case h.Facts.Kafka == nil && len(c.stormListeners()) == 0:
		return c.noKafkaFinding()
	case nClients == 0:
		return unknown("no client host in the inventory: put producer hosts in the clients group so their side of each connection can be compared")
	case h.Facts.Conns == nil:
		return unknown(c.notGathered(facts.SecConns, "the broker's connections (ss -tin)"))
	}
	ms := m.matched[i]
	sort.Slice(ms, func(a, b int) bool { return ms[a].t.client.String() < ms[b].t.client.String() })
	var bad []string
	for _, x := range ms {
		if x.mismatched() {
			bad = append(bad, fmt.Sprintf("%s ↔ %s (client %s): client snd_wscale %s, broker rcv_wscale %s", x.t.broker, x.t.client, x.client, scale(x.snd), scale(x.rcv)))
		}
	}
	un := m.unmatched[i]
	fd := Finding{Expected: "every matched connection: client snd_wscale = broker rcv_wscale"}
	fd.Observed = fmt.Sprintf("%d connections matched from %d client hosts, %d with mismatched scale", len(ms), len(m.clients[i]), len(bad))
	if len(un) > 0 {
		fd.Observed += fmt.Sprintf("; %d not matched", len(un))
	}
	fd.Evidence = append(capList(bad, 50), capList(un, 20)...)
	switch {
	case len(bad) > 0:
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%d connections run with a window scale other than the one the broker advertised: the wscale bug of SYN-cookie connections (commit 909172a missing), caught from both ends; each stays slow until it is re-established", len(bad))
		fd.Fix = &Fix{
			Summary: "upgrade the broker's kernel (see kernel-synack-wscale) and re-establish the mismatched connections",
			Manual:  "upgrade the kernel to a release with commit 909172a, then restart the producers' connections (or the broker, one at a time) so they are re-established",
			Alternatives: []Alternative{
				{Text: "until the upgrade: net.ipv4.tcp_syncookies=0 with a larger listen backlog (no new cookie connections; SYNs dropped when the queue is full)", Sysctl: map[string]string{KeySyncookies: "0"}},
			},
		}
	case len(ms) == 0:
		fd.Status = Unknown
		fd.Reason = fmt.Sprintf("no connection from the %d client hosts could be matched with this broker's side", nClients)
		if len(un) > 0 {
			fd.Reason += fmt.Sprintf(" (%d went to its addresses but were not found here)", len(un))
		}
	default:
		fd.Status = Pass
		fd.Reason = "every matched connection uses the window scale the broker advertised"
	}
	return fd
}

func capList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(append([]string(nil), l[:n]...), fmt.Sprintf("… and %d more", len(l)-n))
}

// FleetFacts is the part of f the fleet rules read (EvaluateFleet gives
// the same findings with it as with f), copied with fresh strings (those
// hosts repeat interned: intern; Interner.FleetFacts shares equal maps
// too) so it
// keeps nothing else of f alive, not even the gather output its strings
// were cut from: what a scan keeps of a host whose facts it has written
// out (pipeline.Config.SpoolFacts) until every host is gathered. Nil for nil.
func FleetFacts(f *facts.Facts) *facts.Facts {
	if f == nil {
		return nil
	}
	out := &facts.Facts{
		KafkaPort: f.KafkaPort, Role: facts.Role(intern(string(f.Role))), ConnsTotal: f.ConnsTotal,
		Listeners: cloneSlice(f.Listeners, func(l facts.Listener) facts.Listener {
			l.Addr, l.Process = strings.Clone(l.Addr), intern(l.Process)
			return l
		}),
		Established: cloneSlice(f.Established, func(e facts.LocalConns) facts.LocalConns {
			e.Addr = strings.Clone(e.Addr)
			return e
		}),
		Conns: cloneSlice(f.Conns, func(c facts.Conn) facts.Conn {
			c.Local, c.Peer = strings.Clone(c.Local), strings.Clone(c.Peer)
			return c
		}),
		Sections: cloneMap(f.Sections, func(s facts.SectionStatus) facts.SectionStatus {
			return facts.SectionStatus{State: facts.SectionState(intern(string(s.State))), Message: intern(s.Message)}
		}),
		// What the peer comparison reads (peers.go).
		Kernel: facts.Kernel{Release: intern(f.Kernel.Release)},
		Sysctl: cloneMap(f.Sysctl, intern),
		Files:  cloneMap(f.Files, intern),
		NICs:   cloneSlice(f.NICs, peerNIC),
	}
	if k := f.Kafka; k != nil {
		out.Kafka = &facts.Kafka{
			PID: k.PID, FoundBy: intern(k.FoundBy), Version: intern(k.Version),
			Distribution: intern(k.Distribution), Jar: intern(k.Jar), Scala: intern(k.Scala),
			Config: intern(k.Config), Properties: cloneMap(k.Properties, intern),
			PropertyLines: cloneMap(k.PropertyLines, func(n int) int { return n }),
			Process:       peerProcess(k.Process),
			Running:       cloneMap(k.Running, func(r facts.RunningConfig) facts.RunningConfig { return r }),
			Cgroup:        peerCgroup(k.Cgroup),   // storage.go
			Devices:       peerDevices(k.Devices), // storage.go
			// The cluster cross-check (scan --bootstrap) proves hosts by
			// these; the peers' devices are found by Device.
			LogDirs: cloneSlice(k.LogDirs, func(d facts.LogDir) facts.LogDir {
				out := facts.LogDir{Path: intern(d.Path), Segments: d.Segments,
					Device: intern(d.Device), Mount: intern(d.Mount), FSType: intern(d.FSType)}
				if d.Meta != nil {
					m := *d.Meta
					out.Meta = &m
				}
				return out
			}),
		}
	}
	return out
}

// cloneSlice copies s element by element through clone; nil stays nil
// and empty stays empty (the rules tell "not gathered" from "none").
func cloneSlice[T any](s []T, clone func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = clone(v)
	}
	return out
}

// cloneMap copies m with interned keys and values through clone; nil
// stays nil.
func cloneMap[V any](m map[string]V, clone func(V) V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[intern(k)] = clone(v)
	}
	return out
}

// intern is s as a canonical copy (unique.Make clones it): the keys and
// values every host repeats (sysctl names and most of their values) are
// held once for the whole fleet, not once per host.
func intern(s string) string { return unique.Make(s).Value() }

// peerNIC is what the peer comparison reads of a NIC.
func peerNIC(n facts.NIC) facts.NIC {
	out := facts.NIC{Name: intern(n.Name), MTU: n.MTU, Features: cloneMap(n.Features, func(f facts.Feature) facts.Feature { return facts.Feature{On: f.On} })}
	if n.Ring != nil {
		r := *n.Ring
		out.Ring = &r
	}
	return out
}

// peerProcess is what the peer comparison reads of the broker process.
func peerProcess(p *facts.BrokerProcess) *facts.BrokerProcess {
	if p == nil {
		return nil
	}
	out := &facts.BrokerProcess{JavaVersion: intern(p.JavaVersion), Xms: p.Xms, Xmx: p.Xmx, Unread: cloneMap(p.Unread, strings.Clone)}
	if p.NoFile != nil {
		l := *p.NoFile
		out.NoFile = &l
	}
	return out
}
