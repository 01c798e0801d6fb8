package audit

import (
	"cmp"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/audit/inventory"
)

// rdnsTargets are, per host, the addresses its rdns section resolves back
// (gather.Params.RDNSSelf, RDNSPeers): its own inventory address and up to
// gather.MaxRDNSPeers of its peers'. A host's peers are the other broker
// hosts of its inventory groups (the implicit "all" aside; a host in no
// group has the other ungrouped hosts): the ones after it in name order,
// wrapping round, so that in a large cluster each broker's address is
// still looked up by some of its peers while each host looks up at most
// a few. Loopback addresses and names that are not an IP or a DNS name
// are left out.
type rdnsTargets struct {
	self  []string
	peers [][]string
}

func newRDNSTargets(hosts []inventory.Host, clientsGroup string) rdnsTargets {
	t := rdnsTargets{self: make([]string, len(hosts)), peers: make([][]string, len(hosts))}
	groups := map[string][]int{}
	for i, h := range hosts {
		if IsClient(h, clientsGroup) {
			continue
		}
		t.self[i] = rdnsAddr(h)
		for _, g := range peerGroups(h) {
			groups[g] = append(groups[g], i)
		}
	}
	for _, members := range groups {
		sort.SliceStable(members, func(a, b int) bool { return hosts[members[a]].Name < hosts[members[b]].Name })
	}
	for i, h := range hosts {
		if !IsClient(h, clientsGroup) {
			t.peers[i] = t.ring(i, hosts, groups)
		}
	}
	return t
}

// ring is host i's peers' addresses: from each of its groups, the members
// after it, until MaxRDNSPeers.
func (t rdnsTargets) ring(i int, hosts []inventory.Host, groups map[string][]int) []string {
	var out []string
	for _, g := range peerGroups(hosts[i]) {
		m := groups[g]
		at := sort.Search(len(m), func(k int) bool { return hosts[m[k]].Name >= hosts[i].Name })
		for k := 1; k < len(m) && len(out) < gather.MaxRDNSPeers; k++ {
			a := t.self[m[(at+k)%len(m)]]
			if a != "" && a != t.self[i] && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// peerGroups are the inventory groups h's peers are found in.
func peerGroups(h inventory.Host) []string {
	var out []string
	for _, g := range h.Groups {
		if g != "all" {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return []string{""} // the ungrouped hosts
	}
	return out
}

// rdnsAddr is h's address as the rdns section may take it, or "".
func rdnsAddr(h inventory.Host) string {
	a := cmp.Or(h.Address, h.Name)
	if ip, err := netip.ParseAddr(a); err == nil {
		if ip.IsLoopback() || ip.Zone() != "" || ip.IsLinkLocalUnicast() {
			return "" // not an address a peer connects to (getent prints no zone)
		}
		return ip.String() // as getent prints it back
	}
	if strings.EqualFold(a, "localhost") || !gather.RDNSAddr(a) {
		return ""
	}
	return a
}
