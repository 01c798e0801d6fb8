package simhost

import (
	"fmt"
	"github.com/kaudit/kaudit/internal/remote"
	"strings"
)

// ProbeAnswer is how a simulated host's kernel answers kaudit's SYN-cookie
// probe (audit/probe): the window scale the client is told (from the
// SYN-ACK) and the one the cookie-completed socket uses, for the cases
// with SO_RCVBUF set below rmem_max. A fixed kernel has Client == Server;
// the talk's bug is Client 1, Server 7. The rmem_max case always agrees.
type ProbeAnswer struct {
	Client, Server int
	Python         string // e.g. "3.6.8 /usr/libexec/platform-python"
}

// probeOutput answers a probe script (recognised by its RCVBUFS line) the
// way probe.sh + probe.py print on a real host; ok is false for any other
// script. A host without a ProbeAnswer answers as a login without root.
// A simulated host with an answer behaves as if kaudit had root there.
func (h *Host) probeOutput(marker string, script []byte) (string, bool) {
	rcvbufs, _ := remote.ScriptVar(script, "RCVBUFS")
	rel, _ := remote.ScriptVar(script, "REL")
	if rcvbufs == "" {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s begin probe\n", marker)
	switch a := h.Probe; {
	case a == nil:
		b.WriteString("state=needs-root\nreason=running as uid 1001 without become: sudo; the probe needs root to create a network namespace\n")
	case rel != h.Release:
		fmt.Fprintf(&b, "release=%s\nstate=error\nreason=kernel release is now %s, not the gathered %s\n", h.Release, h.Release, rel)
	default:
		const rmemMax = 212992
		fmt.Fprintf(&b, "release=%s\narch=x86_64\npython=%s\nrmem_max=%d\nhost_syncookies_before=1\n", h.Release, a.Python, rmemMax)
		b.WriteString("unshare=unshare(1)\nnetns_host=net:[4026531992]\nnetns_probe=net:[4026532301]\n")
		for _, r := range strings.Fields(rcvbufs) {
			n, client, server := 0, a.Client, a.Server
			if _, err := fmt.Sscan(r, &n); err != nil || n >= rmemMax {
				n, client, server = rmemMax, 2, 2
			}
			// The two lines of a case (audit/probe/parse.go); a mismatch
			// crawls as on a real kernel (about 14 KB/s until its limit).
			flowed, ms := 393216, 3
			if client != server {
				flowed, ms = 13312, 951
			}
			fmt.Fprintf(&b, "handshake=rcvbuf=%d effective=%d client_snd_wscale=%d client_rcv_wscale=7 server_snd_wscale=7 server_rcv_wscale=%d cookies_sent=1 cookies_recv=1\n",
				n, 2*n, client, server)
			fmt.Fprintf(&b, "transfer=rcvbuf=%d bytes=393216 flowed=%d ms=%d limit_ms=950\n", n, flowed, ms)
		}
		b.WriteString("host_syncookies_during=1\nelapsed_ms=14\nstate=ok\nexit=0\nhost_syncookies_after=1\n")
	}
	fmt.Fprintf(&b, "\n%s end probe ok\n%s done\n", marker, marker)
	return b.String(), true
}
