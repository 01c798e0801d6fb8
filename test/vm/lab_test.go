//go:build vm

package vm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLab boots each kernel and checks what the kaudit tests built on this
// lab rely on: the kernel's identity, what the plain VM does not offer
// (bbr), the e1000e ring sizes, the SYN-cookie window bug only in the
// reverted kernel, a synced file surviving a power cut, and a reboot.
func TestLab(t *testing.T) {
	lab := Prepare(t)
	t.Logf("lab %s\n%s", lab.Dir, lab.Timings)
	for _, fl := range []Flavour{Stock, Reverted} {
		t.Run(string(fl), func(t *testing.T) {
			start := time.Now()
			g := Boot(t, Options{Flavour: fl})
			t.Logf("boot to SSH (TCG): %s", time.Since(start).Round(100*time.Millisecond))

			rel := strings.TrimSpace(g.MustRun(t, "uname -r"))
			if want := "-kaudit-" + string(fl); !strings.HasSuffix(rel, want) || rel != lab.Kernels[fl].Release {
				t.Errorf("uname -r = %q, want %q (ending %s)", rel, lab.Kernels[fl].Release, want)
			}
			if v := g.MustRun(t, "uname -v"); strings.Contains(v, "Debian") {
				t.Errorf("uname -v claims Debian: %q", v)
			}
			if out := g.MustRun(t, "test -s /lib/modules/$(uname -r)/modules.builtin && echo ok"); strings.TrimSpace(out) != "ok" {
				t.Errorf("no modules.builtin for the running kernel: %q", out)
			}

			cc := g.MustRun(t, "cat /proc/sys/net/ipv4/tcp_available_congestion_control")
			if strings.Contains(cc, "bbr") || !strings.Contains(cc, "cubic") {
				t.Errorf("tcp_available_congestion_control = %q: want cubic and no bbr", cc)
			}

			checkE1000e(t, g)
			checkCookieWindow(t, g, fl == Reverted)

			// A file written and synced survives a power cut.
			token := randomHex(t)
			g.MustRun(t, "printf %s "+token+" >/root/powercut && sync")
			start = time.Now()
			if err := g.PowerCut(); err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			t.Logf("power cut + boot to SSH: %s", time.Since(start).Round(100*time.Millisecond))
			if got := g.MustRun(t, "cat /root/powercut"); got != token {
				t.Errorf("after the power cut /root/powercut = %q, want %q", got, token)
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			before, err := g.BootID(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			start = time.Now()
			if err := g.Reboot(); err != nil {
				t.Fatal(err)
			}
			t.Logf("reboot to SSH: %s", time.Since(start).Round(100*time.Millisecond))
			ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
			after, err := g.BootID(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if after == before || g.Boots != 3 {
				t.Errorf("boot_id %s → %s after Reboot, %d QEMU starts: want a new boot_id and 3 starts", before, after, g.Boots)
			}
		})
	}
}

// checkE1000e finds the e1000e NIC by its driver and checks its rings: the
// driver boots with 256 RX descriptors of a 4096 maximum, and the NIC is
// left unconfigured (no IPv4 address).
func checkE1000e(t *testing.T, g *Guest) {
	t.Helper()
	nic := strings.TrimSpace(g.MustRun(t, `for d in /sys/class/net/*; do `+
		`[ "$(basename "$(readlink "$d/device/driver")")" = e1000e ] && basename "$d"; done; true`))
	if nic == "" || strings.ContainsAny(nic, " \n") {
		t.Fatalf("e1000e NICs: %q, want exactly one", nic)
	}
	maxRX, curRX, err := parseRingsRX(g.MustRun(t, "ethtool -g "+nic))
	if err != nil {
		t.Fatalf("ethtool -g %s: %v", nic, err)
	}
	if maxRX != 4096 || curRX != 256 {
		t.Errorf("ethtool -g %s: RX %d of max %d, want 256 of 4096", nic, curRX, maxRX)
	}
	if addr := g.MustRun(t, "ip -4 -o addr show dev "+nic); strings.TrimSpace(addr) != "" {
		t.Errorf("the e1000e NIC %s is configured: %q", nic, addr)
	}
}

// parseRingsRX reads the RX lines of the "Pre-set maximums" and "Current
// hardware settings" sections of ethtool -g.
func parseRingsRX(out string) (maxRX, curRX int, err error) {
	section := ""
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Pre-set maximums:"):
			section = "max"
		case strings.HasPrefix(line, "Current hardware settings:"):
			section = "cur"
		case strings.HasPrefix(line, "RX:") && section != "":
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "RX:")))
			if err != nil {
				return 0, 0, fmt.Errorf("%q: %v", line, err)
			}
			if section == "max" {
				maxRX = n
			} else {
				curRX = n
			}
			seen[section] = true
		}
	}
	if !seen["max"] || !seen["cur"] {
		return 0, 0, fmt.Errorf("no RX line in both sections:\n%s", out)
	}
	return maxRX, curRX, nil
}

// cookieProbe is audit/probe's method (the talk's tcp_syncookies=2), in a throw-away network namespace of
// the guest: every SYN answered with a cookie (tcp_syncookies=2), a
// listener with SO_RCVBUF 102400 as Kafka sets it, one loopback connection;
// it prints the window scale the client was told (its tcpi_snd_wscale) and
// the one the server uses (the accepted socket's tcpi_rcv_wscale): byte 6
// of struct tcp_info, snd in the low 4 bits, rcv in the high 4.
const cookieProbe = `unshare -n sh -c 'ip link set lo up && sysctl -qw net.ipv4.tcp_syncookies=2 && python3 -c "
import socket
def ws(s):
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)[6]
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 102400)
l.bind((\"127.0.0.1\", 0))
l.listen(50)
c = socket.create_connection(l.getsockname(), timeout=10)
a, _ = l.accept()
print(ws(c) & 15, ws(a) >> 4)
"'`

// checkCookieWindow runs cookieProbe: the stock kernel uses the scale it
// advertised, the reverted one another (the talk's "advertised 1, used 7").
func checkCookieWindow(t *testing.T, g *Guest, wantBug bool) {
	t.Helper()
	f := strings.Fields(g.MustRun(t, cookieProbe))
	if len(f) != 2 {
		t.Fatalf("cookie probe printed %q, want two window scales", f)
	}
	told, _ := strconv.Atoi(f[0])
	used, _ := strconv.Atoi(f[1])
	t.Logf("SYN cookie, SO_RCVBUF 102400: client told wscale %d, server uses %d", told, used)
	if gotBug := told != used; gotBug != wantBug {
		t.Errorf("client told wscale %d, server uses %d: mismatch %v, want %v", told, used, gotBug, wantBug)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestParseRingsRX checks the ethtool -g parser on ethtool 6.1's output for
// an e1000e (as the bookworm guest prints it).
func TestParseRingsRX(t *testing.T) {
	out := `Ring parameters for enp0s4:
Pre-set maximums:
RX:			4096
RX Mini:		n/a
RX Jumbo:		n/a
TX:			4096
Current hardware settings:
RX:			256
RX Mini:		n/a
RX Jumbo:		n/a
TX:			256
RX Buf Len:		n/a
CQE Size:		n/a
TX Push:		off
TCP data split:		n/a
`
	for _, c := range []struct {
		in       string
		max, cur int
		ok       bool
	}{
		{out, 4096, 256, true},
		{strings.Replace(out, "RX:			256", "RX:			4096", 1), 4096, 4096, true},
		{"Cannot get device ring settings: Operation not supported\n", 0, 0, false},
		{"Pre-set maximums:\nRX: 4096\n", 0, 0, false},
		{"Pre-set maximums:\nRX: lots\nCurrent hardware settings:\nRX: 1\n", 0, 0, false},
	} {
		m, cur, err := parseRingsRX(c.in)
		if (err == nil) != c.ok || m != c.max || cur != c.cur {
			t.Errorf("parseRingsRX(%.40q) = %d, %d, %v; want %d, %d, ok %v", c.in, m, cur, err, c.max, c.cur, c.ok)
		}
	}
}
