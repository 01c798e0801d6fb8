package probe

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

// cutHarness runs the embedded probe.py (from $KAUDIT_PROBE_SRC) with its
// transfer replaced, to play a kernel whose cookie connections crawl:
// "stall" crawls until each transfer's limit (as the bug does), "alarm"
// blocks past the budget (python's SIGALRM stops it), "kill" blocks with
// SIGALRM ignored (timeout(1)'s SIGKILL ends it). Everything else — the
// namespace, the handshakes, the budget shares — is the real probe.
const cutHarness = `import os, signal, sys, time
g = {"__name__": "kaudit_probe"}
exec(compile(os.environ["KAUDIT_PROBE_SRC"], "probe.py", "exec"), g)
mode = sys.argv.pop(1)
def stall(c, s, payload, limit):
    time.sleep(limit)
    return 13312, int(limit * 1000)
def hang(c, s, payload, limit):
    time.sleep(30)
    return 0, 0
g["transfer"] = stall if mode == "stall" else hang
if mode == "kill":
    g["on_alarm"] = signal.SIG_IGN
g["main"]()
`

// runCut runs the harness as probe.sh would (under timeout -s KILL and
// unshare -n, fd 3 on the host's tcp_syncookies) and frames its output.
func runCut(t *testing.T, mode string, budget time.Duration) (*facts.Probe, string, time.Duration) {
	t.Helper()
	py, err := exec.LookPath("/usr/bin/python3")
	if err != nil {
		if py, err = exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	for _, c := range []string{"unshare", "timeout"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skip(c + " not installed")
		}
	}
	nsh, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	guard, err := os.OpenFile("/proc/sys/net/ipv4/tcp_syncookies", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer guard.Close()
	killS := strconv.Itoa(int(budget.Seconds()) + 2)
	args := []string{"-s", "KILL", killS, "unshare", "-n", py, "-E", "-s", "-c", cutHarness, mode,
		strconv.FormatInt(budget.Milliseconds(), 10), strconv.Itoa(DefaultPayload), nsh}
	cmd := exec.Command("timeout", append(args, Cases("")...)...)
	cmd.Env = append(os.Environ(), "KAUDIT_PROBE_SRC="+pythonSource)
	rmem, err := os.Open("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Fatal(err)
	}
	defer rmem.Close()
	cmd.ExtraFiles = []*os.File{guard, rmem} // fd 3, fd 4 as probe.sh opens them
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	exit := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
		if exit < 0 { // killed: report as the shell would
			exit = 137
		}
	} else if err != nil {
		t.Fatal(err)
	}
	framed := testMarker + " begin probe\n" + string(out) + "exit=" + strconv.Itoa(exit) + "\nhost_syncookies_after=" +
		readSyncookies(t) + "\n\n" + testMarker + " end probe ok\n" + testMarker + " done\n"
	return Parse([]byte(framed), testMarker), framed, wall
}

// A probe cut short keeps every window-scale pair it printed, and a
// stalled transfer does not eat the next cases' time.
func TestProbeCutShortKeepsHandshakes(t *testing.T) {
	needRoot(t)
	before := readSyncookies(t)
	tests := []struct {
		mode    string
		budget  time.Duration
		state   facts.ProbeState
		reason  string
		cases   int
		maxWall time.Duration
	}{
		// Every transfer crawls to its limit: all three cases still run,
		// each in its own share, and the probe finishes within its budget.
		// (The wall time adds python's start and the namespace's creation,
		// which the budget, counted from python's start, does not hold.)
		{"stall", 3 * time.Second, facts.ProbeOK, "", 3, 4 * time.Second},
		// The first transfer never returns: SIGALRM (budget + 1 s) stops
		// python, which says where it was; the handshake stays.
		{"alarm", time.Second, facts.ProbeTimeout, "SIGALRM: the probe's hard limit passed while transferring with SO_RCVBUF=102400", 1, 2800 * time.Millisecond},
		// ... and with SIGALRM ignored, timeout(1)'s SIGKILL (budget + 2 s).
		{"kill", time.Second, facts.ProbeTimeout, "exit 137", 1, 3800 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			p, out, wall := runCut(t, tt.mode, tt.budget)
			if p.State != tt.state || !strings.Contains(p.Reason, tt.reason) || len(p.Cases) != tt.cases {
				t.Fatalf("state %s (%s), %d cases; want %s containing %q, %d cases\n%s", p.State, p.Reason, len(p.Cases), tt.state, tt.reason, tt.cases, out)
			}
			if tt.state == facts.ProbeOK && p.RemoteMS > tt.budget.Milliseconds() {
				t.Errorf("the probe took %d ms of its %s budget", p.RemoteMS, tt.budget)
			}
			if wall > tt.maxWall {
				t.Errorf("took %s, want at most %s", wall, tt.maxWall)
			}
			sum := 0
			for i, c := range p.Cases {
				if c.CookiesRecv != 1 || c.ClientSndWscale != c.ServerRcvWscale {
					t.Errorf("case %d: %+v", i, c)
				}
				if tt.mode == "stall" && (c.Flowed != 13312 || c.LimitMS < 200 || c.LimitMS > 2000 || c.MS != c.LimitMS) {
					t.Errorf("case %d: stalled transfer %+v", i, c)
				}
				if tt.mode != "stall" && c.Bytes != 0 {
					t.Errorf("case %d: a transfer line from a transfer that never ended: %+v", i, c)
				}
				sum += c.LimitMS
			}
			if sum > int(tt.budget.Milliseconds()) {
				t.Errorf("transfer limits add up to %d ms, over the %s budget", sum, tt.budget)
			}
			if got := readSyncookies(t); got != before {
				t.Errorf("host tcp_syncookies %s before, %s after", before, got)
			}
			t.Logf("%s in %s:\n%s", tt.mode, wall, out)
		})
	}
}
