//go:build e2e

package testfleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// maxExtraAddrs bounds HostSpec.ExtraAddrs (one /24 per host).
const maxExtraAddrs = 250

// checkBehind validates Behind and ExtraAddrs: a bastion is an earlier
// host, so the topology is a tree rooted in hosts wired to the root
// namespace.
func checkBehind(t testing.TB, specs []HostSpec) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range specs {
		if s.Behind != "" && !seen[s.Behind] {
			t.Fatalf("testfleet: host %s: Behind %q must name an earlier host", s.Name, s.Behind)
		}
		if s.ExtraAddrs < 0 || s.ExtraAddrs > maxExtraAddrs || (s.ExtraAddrs > 0 && s.Behind == "") {
			t.Fatalf("testfleet: host %s: ExtraAddrs %d: want 0..%d, and only with Behind (the root namespace gets no routes)", s.Name, s.ExtraAddrs, maxExtraAddrs)
		}
		seen[s.Name] = true
	}
}

// networkBehind wires eth0 of h to its bastion's network namespace: the
// veth's other end (h.Link, h.PeerAddr) lives in the bastion, never in the
// root namespace. Extra addresses get a route in the bastion only.
func (h *Host) networkBehind() error {
	b := h.fleet.Host(h.Spec.Behind)
	select {
	case <-b.netUp:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("bastion %s: network not up after 30s", b.Spec.Name)
	}
	cmds := [][]string{
		{"ip", "netns", "add", h.NS},
		{"ip", "-n", b.NS, "link", "add", h.Link, "type", "veth", "peer", "name", "eth0", "netns", h.NS},
		{"ip", "-n", b.NS, "addr", "add", h.PeerAddr + "/30", "dev", h.Link},
		{"ip", "-n", b.NS, "link", "set", h.Link, "up"},
		{"ip", "-n", h.NS, "addr", "add", h.Addr + "/30", "dev", "eth0"},
		{"ip", "-n", h.NS, "link", "set", "eth0", "up"},
		{"ip", "-n", h.NS, "link", "set", "lo", "up"},
	}
	if h.Spec.ExtraAddrs > 0 {
		cmds = append(cmds, []string{"ip", "-n", b.NS, "route", "add", fmt.Sprintf("198.19.%d.0/24", h.index), "via", h.Addr, "dev", h.Link})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return h.addExtraAddrs()
}

// addExtraAddrs puts the extra addresses on eth0 in one ip -batch.
func (h *Host) addExtraAddrs() error {
	if h.Spec.ExtraAddrs == 0 {
		return nil
	}
	var batch strings.Builder
	for j := 1; j <= h.Spec.ExtraAddrs; j++ {
		a := fmt.Sprintf("198.19.%d.%d", h.index, j)
		h.ExtraAddrs = append(h.ExtraAddrs, a)
		fmt.Fprintf(&batch, "addr add %s/32 dev eth0\n", a)
	}
	p := filepath.Join(h.Dir, "extra-addrs.batch")
	if err := os.WriteFile(p, []byte(batch.String()), 0o600); err != nil {
		return err
	}
	if out, err := exec.Command("ip", "-n", h.NS, "-batch", p).CombinedOutput(); err != nil {
		return fmt.Errorf("ip -batch %s: %v: %s", p, err, out)
	}
	return nil
}

// listenAddress is sshd's ListenAddress: every address when the host has
// extra ones.
func (h *Host) listenAddress() string {
	if h.Spec.ExtraAddrs > 0 {
		return "ListenAddress 0.0.0.0:22"
	}
	return "ListenAddress " + h.Addr + ":22"
}

func (h *Host) maxStartups() string {
	if h.Spec.DefaultMaxStartups {
		return "MaxStartups 10:30:100"
	}
	return "MaxStartups 200:30:400"
}

// trustedCAs is the sshd_config line for HostSpec.TrustedUserCAKeys ("" =
// a comment, so the config's line count stays the same).
func (h *Host) trustedCAs() string {
	if h.Spec.TrustedUserCAKeys == "" {
		return "# no TrustedUserCAKeys"
	}
	return "TrustedUserCAKeys " + h.Spec.TrustedUserCAKeys
}

// HostKeyLine is h's host key as a known_hosts line for the given names.
func (h *Host) HostKeyLine(names ...string) (string, error) {
	b, err := os.ReadFile(filepath.Join(h.Dir, "ssh_host_ed25519_key.pub"))
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return "", fmt.Errorf("%s: bad host key file", h.Spec.Name)
	}
	return strings.Join(names, ",") + " " + f[0] + " " + f[1], nil
}

// SSHDConnections counts the TCP connections established to h's sshd
// (port 22) right now, read from its network namespace.
func (h *Host) SSHDConnections() int {
	n := 0
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", h.InitPid, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fl := strings.Fields(line)
			if len(fl) > 3 && fl[3] == "01" && strings.HasSuffix(fl[1], ":0016") {
				n++
			}
		}
	}
	return n
}
