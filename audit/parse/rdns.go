package parse

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ReverseDNS reads the rdns section, one line per address:
//
//	ptr self|peer ADDR IP RC UP0 UP1 [GETENT'S LINE]
//	ptr self|peer ADDR !unresolved|!skipped
//
// RC is the exit status of timeout(1) around getent hosts IP (0 a name,
// 2 none, 124 the bound reached), UP0 and UP1 /proc/uptime before and
// after it (seconds with two decimals), getent's line "IP NAME ALIAS…".
// A line that does not read so is an error, never a lookup guessed.
func ReverseDNS(body string) (*facts.ReverseDNS, error) {
	r := &facts.ReverseDNS{Lookups: []facts.PTRLookup{}}
	for n, l := range strings.Split(body, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		lk, err := ptrLine(f)
		if err != nil {
			return nil, fmt.Errorf("rdns line %d: %w", n+1, err)
		}
		r.Lookups = append(r.Lookups, lk)
	}
	return r, nil
}

func ptrLine(f []string) (facts.PTRLookup, error) {
	if len(f) < 4 || f[0] != "ptr" || (f[1] != "self" && f[1] != "peer") {
		return facts.PTRLookup{}, fmt.Errorf("not \"ptr self|peer ADDR …\": %q", strings.Join(f, " "))
	}
	lk := facts.PTRLookup{Addr: f[2], Peer: f[1] == "peer"}
	switch f[3] {
	case "!unresolved":
		lk.Stat = facts.PTRUnresolved
		return lk, nil
	case "!skipped":
		lk.Stat = facts.PTRSkipped
		return lk, nil
	}
	if len(f) < 7 {
		return lk, fmt.Errorf("%s: want IP RC UP0 UP1, got %q", lk.Addr, strings.Join(f[3:], " "))
	}
	ip, err := netip.ParseAddr(f[3])
	if err != nil {
		return lk, fmt.Errorf("%s: looked up %q, not an address", lk.Addr, f[3])
	}
	lk.IP = ip.String()
	rc, err := strconv.Atoi(f[4])
	if err != nil {
		return lk, fmt.Errorf("%s: exit status %q", lk.Addr, f[4])
	}
	t0, ok0 := centis(f[5])
	t1, ok1 := centis(f[6])
	if !ok0 || !ok1 || t1 < t0 {
		return lk, fmt.Errorf("%s: uptime readings %q %q", lk.Addr, f[5], f[6])
	}
	lk.Millis = (t1 - t0) * 10
	switch {
	case rc == 0 && len(f) >= 9:
		lk.Stat, lk.Name = facts.PTRFound, f[8]
	case rc == 0, rc == 2:
		lk.Stat = facts.PTRMissing
	case rc == 124:
		lk.Stat = facts.PTRTimeout
	default:
		lk.Stat = facts.PTRError
	}
	return lk, nil
}

// centis reads a /proc/uptime field ("351735.46") as centiseconds.
func centis(s string) (int64, bool) {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 2 {
		return 0, false
	}
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < 0 {
		return 0, false
	}
	return a*100 + b, true
}
