package probe

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/transport"
)

// The tests in this file run the real probe on this machine's kernel
// through transport.Local (as the e2e fleet does over SSH). They need root
// and python3, and skip otherwise.

func isRoot() bool { return runtime.GOOS == "linux" && os.Geteuid() == 0 }

func needRoot(t *testing.T) {
	t.Helper()
	if !isRoot() {
		t.Skip("needs root on Linux")
	}
}

func osRelease() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

func thisKernel(t *testing.T) facts.Kernel {
	t.Helper()
	r := osRelease()
	if r == "" {
		t.Fatal("cannot read /proc/sys/kernel/osrelease")
	}
	return facts.Kernel{Release: r}
}

func readSyncookies(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_syncookies")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// snapshot is what could be left behind: named namespaces, temp files,
// processes running the probe.
type snapshot struct{ netns, tmp, procs []string }

func takeSnapshot(t *testing.T) snapshot {
	t.Helper()
	var s snapshot
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		s.netns = strings.Fields(string(out))
	}
	// TMPDIR is the test's own empty dir (see TestProbeThisKernel); the
	// shared ones are only searched for what a probe or python would name.
	for _, d := range []string{os.Getenv("TMPDIR"), "/tmp", "/dev/shm", "/var/tmp"} {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			n := e.Name()
			if d == os.Getenv("TMPDIR") || strings.Contains(n, "kaudit-probe") {
				s.tmp = append(s.tmp, filepath.Join(d, n))
			}
		}
	}
	s.procs = probeProcesses()
	sort.Strings(s.tmp)
	return s
}

// probeProcesses lists processes whose command line carries the probe.
func probeProcesses() []string {
	var out []string
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "kaudit SYN-cookie window-scale probe") {
			out = append(out, d.Name())
		}
	}
	return out
}

func (s snapshot) leftovers(after snapshot) []string {
	var bad []string
	old := map[string]bool{}
	for _, x := range append(append([]string{}, s.netns...), s.tmp...) {
		old[x] = true
	}
	for _, x := range append(append([]string{}, after.netns...), after.tmp...) {
		if !old[x] {
			bad = append(bad, x)
		}
	}
	return append(bad, after.procs...)
}

func TestProbeThisKernel(t *testing.T) {
	needRoot(t)
	t.Setenv("TMPDIR", t.TempDir())
	before, snap := readSyncookies(t), takeSnapshot(t)
	p := Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, thisKernel(t), "", Options{})
	if p.State != facts.ProbeOK {
		t.Fatalf("state %s: %s", p.State, p.Reason)
	}
	if got := readSyncookies(t); got != before || p.HostSyncookiesBefore != before || p.HostSyncookiesAfter != before || p.HostSyncookiesDuring != before {
		t.Errorf("host tcp_syncookies %s before, %s after (probe saw %s/%s/%s)", before, got, p.HostSyncookiesBefore, p.HostSyncookiesDuring, p.HostSyncookiesAfter)
	}
	if len(p.Cases) != 3 || p.Cases[0].RcvBuf != KafkaDefaultRcvBuf || p.Cases[2].RcvBuf != p.RmemMax {
		t.Fatalf("cases %+v", p.Cases)
	}
	for _, c := range p.Cases {
		// This machine's kernel has commit 909172a: the two ends agree, and
		// the connection really went through the cookie path.
		if c.ClientSndWscale != c.ServerRcvWscale || c.CookiesRecv != 1 || c.Bytes != DefaultPayload || c.Flowed != c.Bytes ||
			c.Effective != 2*c.RcvBuf || c.LimitMS <= 0 || c.LimitMS > 2000 || c.MS > c.LimitMS {
			t.Errorf("case %+v", c)
		}
	}
	if p.Unshare != "unshare(1)" { // util-linux is here: the wrapper makes the namespace
		t.Errorf("namespace made by %q", p.Unshare)
	}
	if p.NetnsHost == "" || p.NetnsHost == p.NetnsProbe {
		t.Errorf("namespaces %q -> %q", p.NetnsHost, p.NetnsProbe)
	}
	if p.ScriptBytes == 0 || p.DurationMS <= 0 && p.RemoteMS < 0 {
		t.Errorf("cost not recorded: %+v", p)
	}
	if left := snap.leftovers(takeSnapshot(t)); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	t.Logf("probe: %d script bytes, %d ms wall, %d ms on the host, cases %+v", p.ScriptBytes, p.DurationMS, p.RemoteMS, p.Cases)
}

// shRunner runs the script with argv instead of /bin/sh -s (e.g. as
// another user), like a host would.
type shRunner struct{ argv []string }

func (r shRunner) Run(ctx context.Context, _ transport.Target, script []byte) (*transport.Output, error) {
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, &transport.Error{Kind: facts.KindTimeout, Msg: ctx.Err().Error()}
	}
	if err != nil {
		return nil, &transport.Error{Kind: facts.KindProtocol, Msg: err.Error()}
	}
	return &transport.Output{Stdout: out}, nil
}

func TestProbeNotRoot(t *testing.T) {
	needRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	r := shRunner{[]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-s"}}
	p := Run(context.Background(), r, transport.Target{Name: "nobody"}, thisKernel(t), "", Options{})
	if p.State != facts.ProbeNeedsRoot || !strings.HasPrefix(p.Reason, NeedsRoot) {
		t.Fatalf("state %s: %s", p.State, p.Reason)
	}
}

// A python that never answers is killed by timeout(1) on the host within
// the budget + 2 s, and nothing of it stays.
func TestProbeHungPythonKilled(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	fake := filepath.Join(dir, "python3")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec sleep 29.517\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, thisKernel(t), "",
		Options{Budget: MinBudget, Pythons: []string{fake}})
	if p.State != facts.ProbeTimeout {
		t.Fatalf("state %s: %s", p.State, p.Reason)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	out, _ := exec.Command("sh", "-c", "ps -eo args | grep -F 'sleep 29.517' | grep -v grep || true").Output()
	if strings.Contains(string(out), "sleep 29.517") {
		t.Errorf("hung python still running: %s", out)
	}
}

func TestProbeNoPython(t *testing.T) {
	needRoot(t)
	p := Run(context.Background(), transport.Local{}, transport.Target{Name: "local", Local: true}, thisKernel(t), "",
		Options{Pythons: []string{"/nonexistent/python3", "kaudit-no-such-python"}})
	if p.State != facts.ProbeNoPython || !strings.Contains(p.Reason, "/nonexistent/python3") {
		t.Fatalf("state %s: %s", p.State, p.Reason)
	}
}
