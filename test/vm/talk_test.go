//go:build vm

package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kaudit/kaudit/rules"
)

// The talk end to end, with a real Kafka client nobody here wrote:
// librdkafka's kcat produces 200 messages of 64 KiB (acks=1) to a broker
// whose listener is made as Kafka makes it (SO_RCVBUF 102400 before
// listen(), backlog 50; kfake answers the protocol), with
// net.ipv4.tcp_syncookies=2 as the talk forced it to reproduce.
//
// On the reverted kernel (6.1, read as fixed by the version table) the
// messages time out; kaudit probe proves the bug; kaudit fix without
// --probe plans tcp_syncookies=0 from the probe's record (and fix --probe
// with no record does the same); fix --apply, with no client connected,
// turns cookies off and says the kernel is still affected but the cookie
// path closed; then every message is delivered, within 2× of the stock
// kernel's time. After a reboot the record is stale and says so. On the
// stock kernel kaudit never turns cookies off.
func TestTalkWithRealProducer(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat (librdkafka) not installed on this machine: apt-get install kcat")
	}
	var mu sync.Mutex
	stockSeconds := make(chan float64, 1)
	for _, fl := range []Flavour{Stock, Reverted} {
		t.Run(string(fl), func(t *testing.T) {
			t.Parallel()
			g := Boot(t, Options{Name: "talk-kcat-" + string(fl), Flavour: fl})
			installBrokerEnv(t, g, "KFT_KAFKA=1")
			pushKcat(t, g, kcat)
			slow(t, g, "sysctl -qw net.ipv4.tcp_syncookies=2") // the talk's reproduction; runtime only
			inv := invFor(t, g)
			records := filepath.Join(t.TempDir(), "probes")

			before := produce(t, g, "before")
			mu.Lock()
			t.Logf("%s before kaudit: %s", fl, before)
			mu.Unlock()

			rep, r := scanJSON(t, "probe", inv, "--timeout", "5m", "--probe-budget", "10s", "--probe-records", records)
			k := findingOf(t, rep, g.Name, rules.RuleKernelSynackWscale)
			t.Logf("probe: kernel-synack-wscale %s/%s (exit %d): %s", k.Status, k.Source, r.code, k.Reason)

			if fl == Stock {
				if before.delivered != 200 {
					t.Fatalf("stock kernel: %s, want 200/200", before)
				}
				stockSeconds <- before.seconds
				if k.Status != rules.Pass || k.Source != rules.SourceProbe {
					t.Fatalf("stock kernel: kernel-synack-wscale %s/%s, want pass/probe", k.Status, k.Source)
				}
				plan := run(t, 10*time.Minute, "fix", inv, "--timeout", "5m", "--probe-records", records)
				t.Logf("stock plan:\n%s", plan.stdout)
				if cookiesTo(plan.stdout) == "0" {
					t.Fatalf("stock kernel: kaudit plans tcp_syncookies=0:\n%s", plan.stdout)
				}
				return
			}

			if before.delivered > 20 || before.timedOut == 0 {
				t.Fatalf("reverted kernel, cookies forced: %s, want the talk's time-outs", before)
			}
			if k.Status != rules.Fail || k.Source != rules.SourceProbe {
				t.Fatalf("reverted kernel: kernel-synack-wscale %s/%s, want fail/probe", k.Status, k.Source)
			}
			// fix without --probe: the record of this boot decides.
			plan := run(t, 10*time.Minute, "fix", inv, "--timeout", "5m", "--probe-records", records)
			t.Logf("reverted plan (recorded probe):\n%s", plan.stdout)
			if cookiesTo(plan.stdout) != "0" || !regexp.MustCompile(`socket\.listen\.backlog\.size \(unset\)\s+→ 4096`).MatchString(plan.stdout) ||
				!strings.Contains(plan.stdout, "net.ipv4.tcp_max_syn_backlog 128 → 8192") {
				t.Fatalf("fix after the probe: want tcp_syncookies → 0 with the raised backlog (socket.listen.backlog.size, tcp_max_syn_backlog; somaxconn is 4096 already):\n%s", plan.stdout)
			}
			// fix --probe with no record (a fresh HOME): the same.
			fresh := run(t, 10*time.Minute, "fix", inv, "--probe", "--timeout", "5m", "--probe-budget", "10s")
			if cookiesTo(fresh.stdout) != "0" {
				t.Fatalf("fix --probe: want tcp_syncookies → 0:\n%s\nstderr:\n%s", fresh.stdout, fresh.stderr)
			}
			applied := run(t, 15*time.Minute, "fix", inv, "--apply", "--yes", "--timeout", "5m", "--probe-records", records,
				"--journal-dir", filepath.Join(t.TempDir(), "runs"))
			t.Logf("reverted apply (exit %d):\n%s\nstderr:\n%s", applied.code, applied.stdout, applied.stderr)
			if applied.code != 0 || !strings.Contains(applied.stdout, "kernel still affected on 1 host ("+g.Name+"): the SYN-cookie path is closed (tcp_syncookies=0)") {
				t.Fatalf("fix --apply: exit %d, want 0 and the residual said:\n%s", applied.code, applied.stdout)
			}
			if got := strings.TrimSpace(g.MustRun(t, "cat /proc/sys/net/ipv4/tcp_syncookies")); got != "0" {
				t.Fatalf("tcp_syncookies after the fix: %s", got)
			}

			after := produce(t, g, "after")
			stock := <-stockSeconds
			stockSeconds <- stock
			t.Logf("reverted after kaudit fix --apply: %s (stock: %.2f s)", after, stock)
			if after.delivered != 200 || after.seconds > 2*stock+0.5 {
				t.Fatalf("after the fix: %s, want 200/200 within 2× the stock kernel's %.2f s", after, stock)
			}

			// A reboot: the record is stale, and says so.
			if err := g.Reboot(); err != nil {
				t.Fatal(err)
			}
			rep, _ = scanJSON(t, "scan", inv, "--timeout", "5m", "--probe-records", records)
			k = findingOf(t, rep, g.Name, rules.RuleKernelSynackWscale)
			t.Logf("after a reboot: kernel-synack-wscale %s/%s: %s", k.Status, k.Source, k.Reason)
			if k.Status == rules.Pass || !strings.Contains(k.Reason, "found the bug on an earlier boot of this kernel") {
				t.Fatalf("after a reboot: kernel-synack-wscale %s/%s, want the stale probe said and no pass: %s", k.Status, k.Source, k.Reason)
			}
		})
	}
}

// produced is one kcat run's outcome.
type produced struct {
	delivered, timedOut int
	seconds             float64
}

func (p produced) String() string {
	return fmt.Sprintf("%d/200 delivered, %d timed out, %.2f s", p.delivered, p.timedOut, p.seconds)
}

// produce sends 200 messages of 64 KiB with acks=1 to topic with kcat in
// the guest (no more than 15 s per message), then reads the topic back
// to count what arrived.
func produce(t *testing.T, g *Guest, topic string) produced {
	t.Helper()
	out := slow(t, g, `set -e
export LD_LIBRARY_PATH=/opt/kcat/lib
f=/root/msgs-`+topic+`
[ -s $f ] || { m=$(head -c 65536 /dev/zero | tr '\0' k); i=0; while [ $i -lt 200 ]; do echo "$m"; i=$((i+1)); done > $f; }
s=$(date +%s%N)
/opt/kcat/kcat -P -b 127.0.0.1:9092 -t `+topic+` -X acks=1 -X message.timeout.ms=15000 -X message.max.bytes=1000000 -l $f 2>/root/kcat-`+topic+`.err || true
e=$(date +%s%N)
echo "ms=$(( (e - s) / 1000000 ))"
echo "timedout=$(grep -c 'timed out' /root/kcat-`+topic+`.err || true)"
echo "delivered=$(timeout 120 /opt/kcat/kcat -C -b 127.0.0.1:9092 -t `+topic+` -e -q -o beginning -f '%o\n' | wc -l)"`)
	var p produced
	for _, m := range regexp.MustCompile(`(?m)^(ms|timedout|delivered)=(\d+)$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		switch m[1] {
		case "ms":
			p.seconds = float64(n) / 1000
		case "timedout":
			p.timedOut = n
		case "delivered":
			p.delivered = n
		}
	}
	return p
}

// cookiesTo is the value a printed plan sets net.ipv4.tcp_syncookies to,
// "" when it plans no change of it.
func cookiesTo(plan string) string {
	m := regexp.MustCompile(`net\.ipv4\.tcp_syncookies[: ]+\S+ → (\d)`).FindStringSubmatch(plan)
	if m == nil {
		return ""
	}
	return m[1]
}

// pushKcat copies this machine's kcat and the libraries it links that the
// guest lacks (both are Debian 12) into /opt/kcat of the guest.
func pushKcat(t *testing.T, g *Guest, kcat string) {
	t.Helper()
	bin, err := os.ReadFile(kcat)
	if err != nil {
		t.Fatal(err)
	}
	push(t, g, "/opt/kcat/kcat", bin, "0755")
	out, err := exec.Command("ldd", kcat).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", kcat, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[1] != "=>" || !strings.HasPrefix(f[2], "/") {
			continue
		}
		name := filepath.Base(f[2])
		if strings.HasPrefix(name, "libc.so") || strings.HasPrefix(name, "libm.so") {
			continue // the guest's own, of the same Debian release
		}
		b, err := os.ReadFile(f[2])
		if err != nil {
			t.Fatal(err)
		}
		push(t, g, "/opt/kcat/lib/"+name, b, "0644")
	}
	if v := slow(t, g, "LD_LIBRARY_PATH=/opt/kcat/lib /opt/kcat/kcat -V | head -1"); !strings.Contains(v, "kcat") {
		t.Fatalf("kcat in the guest: %q", v)
	}
}
