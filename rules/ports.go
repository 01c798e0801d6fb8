package rules

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// KafkaPorts are the ports a broker serves clients on, sorted: the
// inventory's Kafka port, the ports of its listeners property
// (PLAINTEXT://:9092,SSL://host:9093) and every port its process listens
// on (ss -p, when readable).
func KafkaPorts(f *facts.Facts) []int {
	if f == nil {
		return nil
	}
	set := map[int]bool{DefaultKafkaPort: f.KafkaPort <= 0, f.KafkaPort: f.KafkaPort > 0}
	if k := f.Kafka; k != nil {
		for _, l := range strings.Split(k.Properties["listeners"], ",") {
			_, hostPort, ok := strings.Cut(strings.TrimSpace(l), "://")
			if i := strings.LastIndexByte(hostPort, ':'); ok && i >= 0 {
				if p, err := strconv.Atoi(hostPort[i+1:]); err == nil && p > 0 && p < 65536 {
					set[p] = true
				}
			}
		}
		for _, l := range f.Listeners {
			if k.PID > 0 && l.PID == k.PID {
				set[l.Port] = true
			}
		}
	}
	var out []int
	for p, on := range set {
		if on {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// hostAddr reads an address as ss prints it ("10.0.0.1", "[::ffff:10.0.0.1]",
// "[fe80::1%eth0]", "fd10::1") as one comparable address: brackets and zone
// dropped, IPv4-mapped IPv6 unmapped. ok is false for "*" and other
// non-addresses.
func hostAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// isWildcard reports whether a listener address ("0.0.0.0", "*", "[::]",
// "::") accepts on every local address.
func isWildcard(s string) bool {
	if s == "*" || s == "" {
		return true
	}
	a, ok := hostAddr(s)
	return ok && a.IsUnspecified()
}
