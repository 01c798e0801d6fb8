//go:build e2e

package e2e

import (
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaudit/kaudit/test/fakecluster"
	"github.com/kaudit/kaudit/test/testfleet"
)

// rolloutFleet is three brokers of one cluster (node ids 0-2, proven by
// meta.properties) with net.core.somaxconn too low, and a fake cluster
// listening in their namespaces whose health the test sets (healthy).
func rolloutFleet(t *testing.T, cluster string) (*testfleet.Fleet, *fakecluster.Control, string) {
	t.Helper()
	var specs []testfleet.HostSpec
	for i, name := range []string{"ro0", "ro1", "ro2"} {
		specs = append(specs, testfleet.HostSpec{Name: name, Sysctls: base("net.core.somaxconn", "128"),
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"log.dirs": "/var/lib/kafka-data"}},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, i)}})
	}
	f := testfleet.Start(t, specs)
	next := 0
	fc, err := fakecluster.New(3, cluster, kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		h := f.Hosts[next]
		next++
		return listenIn(h.NS, net.JoinHostPort(h.Addr, "9093"))
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fc.Close)
	fc.Set(fakecluster.Healthy("orders", 3, 0, 1, 2)...)
	fc.MinISR("orders", 2)
	return f, fc, writeInventory(t, f, entry(f.Hosts[0]), entry(f.Hosts[1]), entry(f.Hosts[2]))
}

func somaxconn(t *testing.T, h *testfleet.Host) string {
	return strings.TrimSpace(h.Exec(t, "cat", "/proc/sys/net/core/somaxconn"))
}

var continueRE = regexp.MustCompile(`(?m)^continue: kaudit (.*) --resume (\S+)$`)

// resumeArgs are the words of the "continue:" line (no word there needs
// a shell's quoting in these tests).
func resumeArgs(t *testing.T, out string) ([]string, string) {
	t.Helper()
	m := continueRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no continue: line in\n%s", out)
	}
	return append(strings.Fields(m[1]), "--resume", m[2], "--yes"), m[2]
}

// TestRolloutGateNeverClears: under-replicated before the first broker
// and never clearing: no broker is changed, exit 4, the output names the
// partition and the command to continue; once healthy, that command
// changes every broker one at a time.
func TestRolloutGateNeverClears(t *testing.T) {
	requireEnv(t)
	f, fc, inv := rolloutFleet(t, "E2ErolloutCluster00001")
	fc.Set(append(fakecluster.Healthy("orders", 2, 0, 1, 2),
		fakecluster.Partition{Topic: "orders", Partition: 2, Leader: 1, Replicas: []int32{1, 2, 0}, ISR: []int32{1, 2}})...)
	journal := t.TempDir()
	args := []string{"fix", inv, "--bootstrap", f.Hosts[0].Addr + ":9093", "--rules", "somaxconn", "--apply", "--yes", "--journal-dir", journal,
		"--health-checks", "2", "--health-interval", "200ms", "--health-timeout", "2s", "--timeout", "30s"}
	r := runKaudit(t, runOpts{}, args...)
	t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 4 {
		t.Fatalf("exit %d, want 4", r.Code)
	}
	for _, want := range []string{"stopped: cluster E2ErolloutCluster00001 not healthy before ro0 within --health-timeout 2s: unhealthy: under-replicated orders-2 (replicas [1,2,0], isr [1,2])",
		"not started: ro0, ro1, ro2"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, h := range f.Hosts {
		if got := somaxconn(t, h); got != "128" {
			t.Errorf("%s: somaxconn %s: changed while the cluster was unhealthy", h.Spec.Name, got)
		}
	}
	resume, id := resumeArgs(t, r.Stdout)
	fc.Set(fakecluster.Healthy("orders", 3, 0, 1, 2)...)
	r = runKaudit(t, runOpts{}, resume...)
	t.Logf("resume stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 0 || !strings.Contains(r.Stdout, "run "+id) {
		t.Fatalf("resume: exit %d", r.Code)
	}
	for _, h := range f.Hosts {
		if got := somaxconn(t, h); got == "128" {
			t.Errorf("%s: somaxconn not changed by the resume", h.Spec.Name)
		}
	}
}

// TestRolloutURPBetweenBrokers: a partition goes under-replicated once
// the first broker is changed, and does not clear: the run stops after
// it (exit 4), the others untouched; the resume, once healthy, changes
// only those, and leaves the first as the first run left it.
func TestRolloutURPBetweenBrokers(t *testing.T) {
	requireEnv(t)
	f, fc, inv := rolloutFleet(t, "E2ErolloutCluster00002")
	var once sync.Once
	fc.OnMetadata(func(int, bool) {
		if out, _ := f.Hosts[0].ExecErr("cat", "/proc/sys/net/core/somaxconn"); strings.TrimSpace(out) != "128" {
			once.Do(func() {
				fc.Set(append(fakecluster.Healthy("orders", 2, 0, 1, 2),
					fakecluster.Partition{Topic: "orders", Partition: 2, Leader: 1, Replicas: []int32{0, 1, 2}, ISR: []int32{1, 2}})...)
			})
		}
	})
	args := []string{"fix", inv, "--bootstrap", f.Hosts[0].Addr + ":9093", "--rules", "somaxconn", "--apply", "--yes", "--journal-dir", t.TempDir(),
		"--health-checks", "2", "--health-interval", "200ms", "--health-timeout", "2s", "--timeout", "30s"}
	r := runKaudit(t, runOpts{}, args...)
	t.Logf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 4 || !strings.Contains(r.Stdout, "not healthy after ro0 within --health-timeout 2s: unhealthy: under-replicated orders-2") ||
		!strings.Contains(r.Stdout, "verified (a resume leaves them as they are): ro0") || !strings.Contains(r.Stdout, "not started: ro1, ro2") {
		t.Fatalf("exit %d, want 4, stopped after ro0", r.Code)
	}
	first := somaxconn(t, f.Hosts[0])
	if first == "128" || somaxconn(t, f.Hosts[1]) != "128" || somaxconn(t, f.Hosts[2]) != "128" {
		t.Fatalf("somaxconn ro0 %s ro1 %s ro2 %s", first, somaxconn(t, f.Hosts[1]), somaxconn(t, f.Hosts[2]))
	}
	// Someone sets ro0 back by hand: the resume must not change it again.
	f.Hosts[0].Exec(t, "sh", "-c", "echo 128 > /proc/sys/net/core/somaxconn")
	fc.OnMetadata(nil)
	fc.Set(fakecluster.Healthy("orders", 3, 0, 1, 2)...)
	resume, _ := resumeArgs(t, r.Stdout)
	r = runKaudit(t, runOpts{}, resume...)
	t.Logf("resume stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	if r.Code != 0 {
		t.Fatalf("resume: exit %d", r.Code)
	}
	if got := somaxconn(t, f.Hosts[0]); got != "128" {
		t.Errorf("ro0 changed again by the resume (somaxconn %s)", got)
	}
	for _, h := range f.Hosts[1:] {
		if got := somaxconn(t, h); got == "128" {
			t.Errorf("%s: somaxconn not changed by the resume", h.Spec.Name)
		}
	}
}

// TestRolloutRefusals: an offline partition, a partition the first
// broker holds at min.insync.replicas, and the cluster lost mid-gate each
// stop the run before any broker changes.
func TestRolloutRefusals(t *testing.T) {
	requireEnv(t)
	f, fc, inv := rolloutFleet(t, "E2ErolloutCluster00003")
	cases := []struct {
		name string
		set  func()
		want string
	}{
		{"offline", func() {
			fc.Set(append(fakecluster.Healthy("orders", 2, 0, 1, 2), fakecluster.Partition{Topic: "orders", Partition: 2, Leader: -1, Replicas: []int32{1, 2}, ISR: []int32{}})...)
		}, "unhealthy: offline orders-2 (replicas [1,2])"},
		{"at min.insync.replicas", func() {
			fc.Set(fakecluster.Partition{Topic: "payments", Partition: 0, Leader: 0, Replicas: []int32{0, 1}, ISR: []int32{0, 1}})
			fc.MinISR("payments", 2)
		}, "refused to change ro0: payments-0 (isr [0,1], min.insync.replicas 2, held by broker 0)"},
		{"connection lost", func() {
			fc.Set(fakecluster.Healthy("orders", 3, 0, 1, 2)...)
			healthReads := 0
			fc.OnMetadata(func(_ int, all bool) { // the scan's discovery (no topics) goes through, the gate's first read too
				if all {
					if healthReads++; healthReads > 1 {
						fc.Down(true)
					}
				}
			})
		}, "could not read the cluster (counted unhealthy)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc.OnMetadata(nil)
			fc.Down(false)
			c.set()
			start := time.Now()
			r := runKaudit(t, runOpts{}, "fix", inv, "--bootstrap", f.Hosts[0].Addr+":9093", "--rules", "somaxconn", "--apply", "--yes", "--journal-dir", t.TempDir(),
				"--health-checks", "2", "--health-interval", "200ms", "--health-timeout", "2s", "--timeout", "30s")
			t.Logf("%v stdout:\n%s\nstderr:\n%s", time.Since(start), r.Stdout, r.Stderr)
			if r.Code != 4 || !strings.Contains(r.Stdout, c.want) || !strings.Contains(r.Stdout, "not started: ro0, ro1, ro2") {
				t.Errorf("exit %d, want 4 and %q", r.Code, c.want)
			}
			for _, h := range f.Hosts {
				if got := somaxconn(t, h); got != "128" {
					t.Errorf("%s: somaxconn %s: changed", h.Spec.Name, got)
				}
			}
		})
	}
}
