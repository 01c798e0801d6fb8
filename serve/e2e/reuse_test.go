//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/test/testfleet"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times.
const clockTicks = 100

// procCPU is a process's own CPU and that of its reaped children, seconds.
func procCPU(pid int) (self, children float64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	if len(f) < 15 {
		return 0, 0, false
	}
	n := func(i int) float64 { v, _ := strconv.ParseFloat(f[i-3], 64); return v / clockTicks }
	return n(14) + n(15), n(16) + n(17), true
}

// hostCPU is the CPU, in seconds, of every process of the fleet's hosts
// (their PID namespaces): total, and the part that is sshd's own (the
// self times of live sshd processes: the listener and, with kept
// connections, each connection's session process). The commands a
// session ran, and a session process that exited, are in the children
// times of their parent, which total counts.
func hostCPU(t *testing.T, f *testfleet.Fleet) (total, sshdSelf float64) {
	t.Helper()
	ns := map[string]bool{}
	for _, h := range f.Hosts {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", h.InitPid))
		if err != nil {
			t.Fatal(err)
		}
		ns[l] = true
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
		if err != nil || !ns[l] {
			continue
		}
		if self, ch, ok := procCPU(pid); ok {
			total += self + ch
			if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.HasPrefix(string(c), "sshd") {
				sshdSelf += self
			}
		}
	}
	return total, sshdSelf
}

// TestServeConnectionReuseCPU measures issue 21's item 5 on real sshd
// hosts: the client CPU and the hosts' CPU per scan of kaudit serve with
// kept connections, against a one-shot kaudit scan of the same fleet and
// against kaudit serve connecting anew each scan; then a host whose sshd
// (and its sessions) is killed and restarted is audited again on a new
// connection. KAUDIT_SERVE_CPU_SCANS sets the scans measured (default 6).
func TestServeConnectionReuseCPU(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("e2e: needs root")
	}
	root := moduleRoot(t)
	bin := buildKaudit(t, root)
	var specs []testfleet.HostSpec
	for i := range 8 {
		specs = append(specs, testfleet.HostSpec{Name: fmt.Sprintf("cpu-%d", i),
			Sysctls: map[string]string{"net.ipv4.tcp_syncookies": "1", "net.core.somaxconn": "4096"},
			Kafka:   &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"socket.listen.backlog.size": "4096"}}})
	}
	f := testfleet.Start(t, specs)
	inv := f.Inventory(t)
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + t.TempDir(), "LANG=C"}
	scans := 6
	if v, err := strconv.Atoi(os.Getenv("KAUDIT_SERVE_CPU_SCANS")); err == nil && v > 0 {
		scans = v
	}

	// One-shot scans: the process's CPU (rusage) and the hosts'.
	oneShot := func() (client, host float64) {
		h0, _ := hostCPU(t, f)
		for range scans {
			cmd := exec.Command(bin, "scan", inv, "-f", "json", "-o", filepath.Join(t.TempDir(), "r.json"))
			cmd.Env = env
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() == 2) {
				t.Fatalf("kaudit scan: %v", err)
			}
			client += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		}
		time.Sleep(500 * time.Millisecond) // session processes reaped by the listeners
		h1, _ := hostCPU(t, f)
		return client / float64(scans), (h1 - h0) / float64(scans)
	}

	// kaudit serve: CPU over `scans` scans after two warm-up scans.
	serveRun := func(keep bool) (client, host, sshd float64, d *daemon) {
		port := freePort(t)
		d = startDaemon(t, fmt.Sprintf("kaudit serve keep=%v", keep), env, bin, "serve", inv, "--interval", "1s", "--jitter", "0",
			"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--state-dir", t.TempDir(), fmt.Sprintf("--keep-connections=%v", keep))
		done := func() int { return strings.Count(d.stderr.String(), "scan done in") }
		wait := func(n int) {
			eventually(t, 120*time.Second, fmt.Sprintf("%d scans", n), func() (bool, string) { return done() >= n, d.stderr.String() })
		}
		wait(2)
		n0, c0 := done(), cpuOf(t, d)
		h0, s0 := hostCPU(t, f)
		wait(n0 + scans)
		n1, c1 := done(), cpuOf(t, d)
		h1, s1 := hostCPU(t, f)
		if strings.Contains(d.stderr.String(), "0 not") == false {
			t.Errorf("a host was not audited:\n%s", d.stderr.String())
		}
		n := float64(n1 - n0)
		return (c1 - c0) / n, (h1 - h0) / n, (s1 - s0) / n, d
	}
	// The hosts' CPU when nobody connects (brokers, init), per second.
	i0, _ := hostCPU(t, f)
	time.Sleep(3 * time.Second)
	i1, _ := hostCPU(t, f)
	idle := (i1 - i0) / 3

	osClient, osHost := oneShot()
	freshClient, freshHost, _, d := serveRun(false)
	d.stop(t, 10*time.Second)
	keptClient, keptHost, keptSSHD, d := serveRun(true)
	// The commands the gather runs cost the same however it connects:
	// what kept connections leave besides sshd's own time. The rest of a
	// one-shot scan's host CPU is sshd's (connection, key exchange,
	// authentication, session set-up).
	commands := keptHost - keptSSHD
	osSSHD := osHost - commands
	freshSSHD := freshHost - commands

	report := fmt.Sprintf("8 hosts, %d scans each; CPU seconds per scan (whole fleet): client / host processes / of which sshd\n", scans) +
		fmt.Sprintf("  idle hosts: %.4f s per second\n", idle) +
		fmt.Sprintf("  one-shot kaudit scan:            %.4f / %.4f / %.4f\n", osClient, osHost, osSSHD) +
		fmt.Sprintf("  kaudit serve, new connections:   %.4f / %.4f / %.4f\n", freshClient, freshHost, freshSSHD) +
		fmt.Sprintf("  kaudit serve, kept connections:  %.4f / %.4f / %.4f\n", keptClient, keptHost, keptSSHD) +
		fmt.Sprintf("  kept / one-shot: client %.2f, host %.2f, sshd %.2f\n", keptClient/osClient, keptHost/osHost, keptSSHD/osSSHD) +
		fmt.Sprintf("  kept / new connections: client %.2f, host %.2f, sshd %.2f\n", keptClient/freshClient, keptHost/freshHost, keptSSHD/freshSSHD)
	t.Log("\n" + report)
	keep(t, "reuse-cpu.txt", report)
	// Issue 21's targets were at most half the client CPU of a one-shot
	// scan and a third of sshd's (measured then: 0.22 and 0.07); the hosts'
	// total, mostly the gather's own commands, drops less (0.74). Since
	// serve spools each scan's facts to its state directory and gives the
	// replaced report's memory back (issue 31: 10,000 hosts in 171 MB),
	// serve's own per-scan work is larger: 0.51-0.58 of a one-shot scan's
	// client CPU on 2026-12-05; 0.61-0.65 in five of seven runs on
	// 2026-12-06, 0.80 and 0.90 in the other two (one of them CI's: about
	// 0.1 s of client CPU a scan, a GC more or less moves it). So the
	// client is held to less than a one-shot scan, and its ratio is
	// reported (reuse-cpu.txt), not asserted; sshd's is the point of
	// keeping connections.
	if keptClient >= osClient || keptSSHD > osSSHD/3 || keptHost >= osHost {
		t.Errorf("kept connections: client %.2f (< 1), sshd %.2f (≤ 0.33), host %.2f (< 1) of a one-shot scan",
			keptClient/osClient, keptSSHD/osSSHD, keptHost/osHost)
	}

	// A host's sshd and sessions killed and restarted: the kept
	// connection is gone; the next scans audit it on a new one.
	h := f.Host("cpu-3")
	h.KillSSHDAll(t)
	h.RestartSSHD(t)
	before := strings.Count(d.stderr.String(), "scan done in")
	eventually(t, 60*time.Second, "two scans after the sshd restart", func() (bool, string) {
		return strings.Count(d.stderr.String(), "scan done in") >= before+2, d.stderr.String()
	})
	lines := strings.Split(strings.TrimSpace(d.stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "8 audited, 0 not") {
		t.Errorf("after the sshd restart: %s", last)
	}
	d.signal(t, syscall.SIGTERM)
}

// cpuOf is the CPU seconds of a running daemon.
func cpuOf(t *testing.T, d *daemon) float64 {
	t.Helper()
	self, _, ok := procCPU(d.cmd.Process.Pid)
	if !ok {
		t.Fatalf("%s: no /proc stat", d.name)
	}
	return self
}
