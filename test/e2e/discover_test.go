//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"
	"golang.org/x/sys/unix"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// listenIn opens a TCP listener inside the network namespace netns: the
// calling goroutine's OS thread enters it (setns), listens, and goes back
// before it is unlocked. The socket stays in the namespace it was made in,
// so kfake, running in this test process, serves each broker from its own
// host's address. (Chosen over a helper binary under ip netns exec: no
// second process to build, start and kill, and kfake stays in-process.)
func listenIn(netns, addr string) (net.Listener, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return nil, err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + netns)
	if err != nil {
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("setns %s: %w", netns, err)
	}
	ln, lerr := net.Listen("tcp", addr)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		panic("cannot return to the test's network namespace: " + err.Error()) // the thread must not run other goroutines
	}
	return ln, lerr
}

// kfakeIn starts a kfake cluster of one broker per host, each listening
// inside its host's namespace on the host's address, port 9093, and
// advertised as it; closed when the test ends.
func kfakeIn(t *testing.T, hosts []*testfleet.Host, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	next := 0
	k, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(len(hosts)),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			h := hosts[next]
			next++
			return listenIn(h.NS, net.JoinHostPort(h.Addr, "9093"))
		})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// metaProps is meta.properties as a KRaft broker writes it.
func metaProps(cluster string, node int) string {
	return fmt.Sprintf("#\n#Tue Dec 01 23:00:00 UTC 2026\nnode.id=%d\ndirectory.id=J8aAPcfLQt2bqs1JT_rMgQ\nversion=1\ncluster.id=%s\n", node, cluster)
}

// TestScanBootstrap: three kfake brokers, each listening inside its own
// test host's namespace on that host's address, advertised as it; the
// inventory lacks broker 2, holds a host that is no broker of the cluster,
// and one host's meta.properties names another cluster.
func TestScanBootstrap(t *testing.T) {
	requireEnv(t)
	const cluster = "E2EdiscoverCluster0001"
	props := func(extra ...string) map[string]string {
		m := map[string]string{"log.dirs": "/var/lib/kafka-data", "socket.listen.backlog.size": "2048"}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	specs := []testfleet.HostSpec{
		{Name: "kd0", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props()},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, 0)}},
		{Name: "kd1", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props()},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps("OtherClusterId", 1)}},
		{Name: "kd2", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props()},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, 2)}},
		{Name: "kdnb", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props()}},
	}
	f := testfleet.Start(t, specs)
	hosts := f.Hosts
	kfakeIn(t, hosts[:3], kfake.ClusterID(cluster), kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "50"}))

	inv := writeInventory(t, f, entry(hosts[0]), entry(hosts[1]), entry(hosts[3]))
	r := scan(t, runOpts{}, inv, "--bootstrap", hosts[0].Addr+":9093")
	c := r.Report.Cluster
	if c == nil {
		t.Fatalf("no cluster in the report\nstderr:\n%s", r.Stderr)
	}
	t.Logf("cluster %s: %+v", c.ID, c.Brokers)
	for _, p := range c.Problems {
		t.Logf("%s %s: %s", p.Severity, p.Rule, p.Message)
	}
	if c.ID != cluster || len(c.Brokers) != 3 {
		t.Fatalf("cluster %q with %d brokers", c.ID, len(c.Brokers))
	}
	b0 := c.Brokers[0]
	if b0.Host != "kd0" || b0.By != "address" || b0.Proof != "proven" || b0.Advertised != hosts[0].Addr+":9093" {
		t.Errorf("broker 0: %+v", b0)
	}
	got := map[string]string{}
	for _, p := range c.Problems {
		got[p.Rule] += p.Message + "\n"
	}
	for rule, want := range map[string]string{
		"broker-unaudited":     fmt.Sprintf("broker 2 (%s:9093) is in cluster %s but in no inventory", hosts[2].Addr, cluster),
		"broker-meta-mismatch": "host kd1 was matched to broker 1",
		"host-not-a-broker":    "host kdnb is in the broker group but matches no advertised broker",
	} {
		if !strings.Contains(got[rule], want) {
			t.Errorf("%s: %q, want %q", rule, got[rule], want)
		}
	}
	fd := finding(r.host(t, "kd0"), "kafka-backlog-config")
	if fd == nil || !strings.Contains(fd.Observed, "the file says 2048") || !strings.Contains(fd.Observed, "the running broker uses 50 (dynamic)") {
		t.Errorf("kd0 kafka-backlog-config: %+v", fd)
	} else {
		t.Logf("kd0 %s: %s %s", fd.Rule, fd.Status, fd.Observed)
	}
	if fd := finding(r.host(t, "kd1"), "kafka-backlog-config"); fd != nil && strings.Contains(fd.Observed, "running broker") {
		t.Errorf("kd1 (meta.properties of another cluster) judged by broker 1's running value: %s", fd.Observed)
	}
	// kfake as it is answers ApiVersions with the newest table (Kafka ≥
	// 4.4); kd0, proven to be broker 0, has jars 3.6.1: another
	// installation than the running one. kd1 is not proven: no claim.
	if b0.KafkaAtLeast != "4.4" {
		t.Errorf("broker 0: Kafka ≥ %q (%s), want 4.4", b0.KafkaAtLeast, b0.KafkaEvidence)
	}
	if m := got["broker-version-mismatch"]; !strings.Contains(m, "broker 0 speaks ApiVersions v5 (Kafka ≥ 4.4) but the jars on kd0 say Apache Kafka 3.6.1") || strings.Contains(m, "kd1") {
		t.Errorf("broker-version-mismatch: %q", m)
	}
	if r.Code != 1 {
		t.Errorf("exit %d, want 1 (high cluster findings)", r.Code)
	}

	// The same scan with every cluster finding waived, one way each: by
	// node ID, by a host glob, by host, and "*"; and the one high host
	// finding (listen-backlog-effective): exit 0.
	waivers := filepath.Join(t.TempDir(), "waivers.yaml")
	must(t, os.WriteFile(waivers, []byte(`waivers:
  - {rule: broker-unaudited, brokers: [2], reason: the other team's broker}
  - {rule: broker-meta-mismatch, hosts: ["kd?"], reason: being rebuilt}
  - {rule: host-not-a-broker, hosts: [kdnb], reason: a spare}
  - {rule: broker-version-mismatch, brokers: ["*"], reason: kfake speaks the newest table}
  - {rule: listen-backlog-effective, hosts: ["*"], reason: the test brokers' backlog is the point of this test}
`), 0o600))
	w := scan(t, runOpts{}, inv, "--bootstrap", hosts[0].Addr+":9093", "--waivers", waivers)
	if w.Report.Cluster == nil {
		t.Fatalf("no cluster in the waived report\nstderr:\n%s", w.Stderr)
	}
	for _, p := range w.Report.Cluster.Problems {
		t.Logf("%s %s: %s", p.Label(), p.Rule, p.Waived)
		if p.Waived == "" {
			t.Errorf("%s %s not waived: %s", p.Severity, p.Rule, p.Message)
		}
	}
	if w.Code != 0 || len(w.Report.Cluster.Problems) != len(c.Problems) || w.Report.WorstFailure().Rank() >= rules.High.Rank() {
		var failing []string
		for _, h := range w.Report.Hosts {
			for _, fd := range h.Findings {
				if fd.Status == rules.Fail {
					failing = append(failing, fmt.Sprintf("%s %s (%s)", h.Name, fd.Rule, fd.Severity))
				}
			}
		}
		t.Errorf("waived: exit %d, worst failure %q, %d problems (want exit 0, below high, %d); failing: %v\nstderr:\n%s", w.Code, w.Report.WorstFailure(), len(w.Report.Cluster.Problems), len(c.Problems), failing, w.Stderr)
	}
}

// TestScanBootstrapNAT: the cluster's one broker advertises an address
// that is a NAT box's (knat), not the broker host's (kn0): clients reach it
// through knat. The inventory lists kn0 only; its meta.properties proves it
// is broker 0, and no socket on kn0 listens on the advertised port, so
// kaudit reports advertised-port-unbound instead of guessing.
func TestScanBootstrapNAT(t *testing.T) {
	requireEnv(t)
	const cluster = "E2EnatCluster000000001"
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "kn0", Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"log.dirs": "/var/lib/kafka-data"}},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, 0)}},
		{Name: "knat", Sysctls: base()},
	})
	kn0, knat := f.Hosts[0], f.Hosts[1]
	kfakeIn(t, []*testfleet.Host{knat}, kfake.ClusterID(cluster), kfake.MaxVersions(kversion.V3_6_0())) // as the jars say: no version mismatch

	r := scan(t, runOpts{}, writeInventory(t, f, entry(kn0)), "--bootstrap", knat.Addr+":9093")
	c := r.Report.Cluster
	if c == nil || len(c.Brokers) != 1 {
		t.Fatalf("cluster %+v\nstderr:\n%s", c, r.Stderr)
	}
	if b := c.Brokers[0]; b.Host != "kn0" || b.By != "meta.properties" || b.Proof != "proven" {
		t.Errorf("broker 0: %+v, want kn0 by meta.properties, proven", b)
	}
	var got []string
	for _, p := range c.Problems {
		got = append(got, p.Rule)
		t.Logf("%s %s: %s", p.Severity, p.Rule, p.Message)
	}
	want := fmt.Sprintf("broker 0 advertises %s:9093, but no socket on host kn0 listens on port 9093 (it listens on only ", knat.Addr)
	if len(c.Problems) != 1 || c.Problems[0].Rule != "advertised-port-unbound" || !strings.Contains(c.Problems[0].Message, want) {
		t.Errorf("problems %v, want one advertised-port-unbound: %q", got, want)
	}
	if len(r.Report.Hosts) != 1 || r.host(t, "kn0").Error != nil {
		t.Errorf("want kn0 alone, audited: %d hosts\nstderr:\n%s", len(r.Report.Hosts), r.Stderr)
	}
}
