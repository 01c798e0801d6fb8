package parse

import (
	"strconv"
	"strings"
)

// DefaultRouteIfaces returns the interfaces that carry a default route:
// Destination 00000000 with Mask 00000000 in /proc/net/route (columns found
// by header name), and ::/0 in /proc/net/ipv6_route. Loopback and reject
// (unreachable) routes are skipped. The result is de-duplicated, in order of
// first appearance, IPv4 first.
func DefaultRouteIfaces(procNetRoute, procNetIPv6Route string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(iface string) {
		if iface == "" || iface == "lo" || seen[iface] {
			return
		}
		seen[iface] = true
		out = append(out, iface)
	}

	lines := nonBlankLines(procNetRoute)
	if len(lines) > 0 {
		hdr := strings.Fields(lines[0].text)
		col := func(name string) int {
			for i, h := range hdr {
				if h == name {
					return i
				}
			}
			return -1
		}
		ci, cd, cm := col("Iface"), col("Destination"), col("Mask")
		if ci >= 0 && cd >= 0 && cm >= 0 {
			for _, l := range lines[1:] {
				f := strings.Fields(l.text)
				if len(f) <= ci || len(f) <= cd || len(f) <= cm {
					continue
				}
				if f[cd] == "00000000" && f[cm] == "00000000" {
					add(f[ci])
				}
			}
		}
	}

	const rtfReject = 0x0200
	for _, l := range nonBlankLines(procNetIPv6Route) {
		// dest plen src splen nexthop metric refcnt use flags iface
		f := strings.Fields(l.text)
		if len(f) < 10 || f[0] != strings.Repeat("0", 32) || f[1] != "00" {
			continue
		}
		if flags, err := strconv.ParseUint(f[8], 16, 32); err == nil && flags&rtfReject != 0 {
			continue
		}
		add(f[9])
	}
	return out
}
