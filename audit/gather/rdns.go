package gather

import (
	"fmt"
	"net/netip"
	"regexp"
)

// MaxRDNSPeers bounds the peers' addresses one host resolves back (the
// rdns section), so the section's cost does not grow with the cluster.
const MaxRDNSPeers = 7

// reDNSName is a DNS host name as RFC 1123 allows it: labels of letters,
// digits and inner hyphens, dot-separated.
var reDNSName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$`)

// RDNSAddr reports whether a may be handed to the rdns section: an IP
// address or a DNS name (never an option or a shell word).
func RDNSAddr(a string) bool {
	if _, err := netip.ParseAddr(a); err == nil {
		return true
	}
	return len(a) <= 253 && reDNSName.MatchString(a)
}

func checkRDNS(p Params) error {
	if len(p.RDNSPeers) > MaxRDNSPeers {
		return fmt.Errorf("gather: %d peer addresses for reverse DNS, at most %d", len(p.RDNSPeers), MaxRDNSPeers)
	}
	for _, a := range append([]string{p.RDNSSelf}, p.RDNSPeers...) {
		if a != "" && !RDNSAddr(a) {
			return fmt.Errorf("gather: address %q for reverse DNS is neither an IP address nor a DNS name", a)
		}
	}
	return nil
}
