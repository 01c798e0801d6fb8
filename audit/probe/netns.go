package probe

import (
	"fmt"
	"regexp"
	"strconv"
)

// PerNetnsSince is the oldest upstream kernel series in which
// net.ipv4.tcp_syncookies is known to be per network namespace: a 4.9 tree
// (OE4T/linux-tegra-4.9, include/net/netns/ipv4.h) has sysctl_tcp_syncookies
// in struct netns_ipv4 [V]; the RHEL source trees [V]: global on 3.10 (RHEL/CentOS 7),
// per namespace on RHEL 8's 4.18 and current kernels. The change itself
// (commit 12ed8244ed8b, "ipv4: Namespaceify tcp syncookies knob") is
// recalled as v4.6 but was not read here [U], so 4.6-4.8 count as
// undecidable and are not probed. A kernel older than this never gets the
// probe: writing the value in a new namespace could change the whole host's.
const PerNetnsSince = "4.9"

var reSeries = regexp.MustCompile(`^(\d+)\.(\d+)`)

// SyncookiesPerNetns decides, from the kernel release alone and before
// anything is written, whether tcp_syncookies is per network namespace. A
// release that cannot be parsed is "no": the probe only runs where it is
// known to be safe. A vendor kernel older than PerNetnsSince that
// backported the change is refused too (safe, merely unprobed); one at or
// above it that reverted it would be caught by the probe's own guard
// (the host's value re-read and restored), which is the second line, not
// the decision.
func SyncookiesPerNetns(release string) (bool, string) {
	x, y, ok := series(release)
	if !ok {
		return false, fmt.Sprintf("kernel release %q has no X.Y version: cannot establish that tcp_syncookies is per network namespace", release)
	}
	sx, sy, _ := series(PerNetnsSince)
	if x < sx || (x == sx && y < sy) {
		return false, fmt.Sprintf("kernel %s (series %d.%d) is older than %s, the oldest series known to keep tcp_syncookies per network namespace: setting it in a new namespace could change the whole host's, so the probe does not run", release, x, y, PerNetnsSince)
	}
	return true, fmt.Sprintf("kernel series %d.%d ≥ %s: tcp_syncookies is per network namespace (decided from the release before writing; the host's value is re-read during the probe)", x, y, PerNetnsSince)
}

func series(release string) (x, y int, ok bool) {
	m := reSeries.FindStringSubmatch(release)
	if m == nil {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(m[1])
	y, err2 := strconv.Atoi(m[2])
	return x, y, err1 == nil && err2 == nil
}
