//go:build e2e

package testfleet

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Wire joins hosts a and b by a veth pair of their own, created directly
// in their two network namespaces (nothing is added to the root
// namespace, and no traffic between them passes through it): interface
// "wire<n>" in each, a with aAddr and b with bAddr (CIDR, e.g.
// "10.77.0.1/24"; IPv6 ones get nodad). The pair goes away with the
// namespaces at teardown.
func (f *Fleet) Wire(t testing.TB, a, b *Host, n int, aAddrs, bAddrs []string) {
	t.Helper()
	name := fmt.Sprintf("wire%d", n)
	cmds := [][]string{{"ip", "link", "add", name, "netns", a.NS, "type", "veth", "peer", "name", name, "netns", b.NS}}
	for _, side := range []struct {
		h     *Host
		addrs []string
	}{{a, aAddrs}, {b, bAddrs}} {
		for _, ad := range side.addrs {
			c := []string{"ip", "-n", side.h.NS, "addr", "add", ad, "dev", name}
			if strings.Contains(ad, ":") {
				c = append(c, "nodad")
			}
			cmds = append(cmds, c)
		}
		cmds = append(cmds, []string{"ip", "-n", side.h.NS, "link", "set", name, "up"})
	}
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("testfleet: wire %s-%s: %s: %v: %s", a.Spec.Name, b.Spec.Name, strings.Join(c, " "), err, out)
		}
	}
}

// Dial opens n TCP connections from inside h's network namespace to addr
// ("10.77.0.1:9092", "[fd77::1]:9092") and keeps them open until the test
// ends. The sockets are created on a locked thread that joins h's
// namespace and then returns to the test process's own namespace before it
// is unlocked. The thread must not exit: the hosts' launchers carry
// Pdeathsig, which the kernel fires when the *thread* that forked them
// dies, so a thrown-away thread could take a whole test host down with it.
// Only if the way back fails is the thread left locked (and so discarded).
func (h *Host) Dial(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	type result struct {
		conns []net.Conn
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var r result
		defer func() { ch <- r }()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread() // still in our own namespace
			r.err = err
			return
		}
		defer home.Close()
		fd, err := os.Open("/run/netns/" + h.NS)
		if err != nil {
			runtime.UnlockOSThread()
			r.err = err
			return
		}
		defer fd.Close()
		if err := unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			r.err = fmt.Errorf("setns %s: %w", h.NS, err)
			return
		}
		r.conns, r.err = dialN(addr, n)
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			if r.err == nil {
				r.err = fmt.Errorf("setns back from %s: %w", h.NS, err)
			}
			return // locked for good: the thread is discarded
		}
		runtime.UnlockOSThread()
	}()
	r := <-ch
	t.Cleanup(func() {
		for _, c := range r.conns {
			c.Close()
		}
	})
	if r.err != nil {
		t.Fatalf("testfleet: %s: dial %s (%d of %d open): %v", h.Spec.Name, addr, len(r.conns), n, r.err)
	}
	return r.conns
}

func dialN(addr string, n int) ([]net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	var conns []net.Conn
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}
