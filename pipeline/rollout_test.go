package pipeline

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

var update = flag.Bool("update", false, "rewrite testdata/rollout-*.golden")

// broker is a report host whose meta.properties names cluster id and
// node, in the inventory groups.
func broker(name, cluster string, node int, groups ...string) report.Host {
	f := &facts.Facts{Kafka: &facts.Kafka{LogDirs: []facts.LogDir{{Path: "/data", Meta: &facts.MetaProperties{ClusterID: cluster, NodeID: node, BrokerID: -1}}}}}
	if cluster == "" {
		f.Kafka.LogDirs = nil
	}
	return report.Host{Name: name, Groups: groups, Facts: f}
}

// proven is the report's --bootstrap cluster: each host proven broker
// node (its rack after a slash: "a1/r1").
func proven(id string, hosts ...string) *report.Cluster {
	rc := &report.Cluster{ID: id}
	for i, h := range hosts {
		name, rack, _ := strings.Cut(h, "/")
		rc.Brokers = append(rc.Brokers, report.ClusterBroker{NodeID: int32(i + 1), Host: name, Rack: rack, Proof: facts.ProofProven})
	}
	return rc
}

func names(r *report.Report) []string {
	var out []string
	for _, h := range r.Hosts {
		out = append(out, h.Name)
	}
	return out
}

// TestRolloutPlans: the order of a rollout as the plan prints it
// (golden files): per cluster one broker at a time, --batch across two
// clusters (never two brokers of one), --batch-by rack.
func TestRolloutPlans(t *testing.T) {
	twoClusters := &report.Report{Hosts: []report.Host{
		broker("a1", "KA", 1, "all", "kafka"), broker("b1", "KB", 1, "all", "kafka"), broker("a2", "KA", 2, "all", "kafka"),
		broker("b2", "KB", 2, "all", "kafka"), broker("a3", "KA", 3, "all", "kafka"),
	}}
	gatedA := *twoClusters
	gatedA.Cluster = proven("KA", "a1", "a2", "a3")
	racks := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1), broker("a2", "KA", 2), broker("a3", "KA", 3), broker("a4", "KA", 4)},
		Cluster: proven("KA", "a1/r1", "a2/r2", "a3/r1", "a4/r2")}
	groups := &report.Report{Hosts: []report.Host{
		broker("x1", "", 0, "all", "dc1", "kafka_x"), broker("y1", "", 0, "all", "kafka_y"), broker("x2", "", 0, "all", "kafka_x"),
		broker("z1", "", 0, "all", "kafka_z", "kafka_y"), {Name: "producer", Facts: &facts.Facts{Role: facts.RoleClient}},
	}}
	cases := []struct {
		name string
		r    *report.Report
		cfg  RolloutConfig
	}{
		{"order-per-cluster", twoClusters, RolloutConfig{Pause: 30 * time.Second}},
		{"batch-two-clusters", &gatedA, RolloutConfig{Batch: 2, Pause: time.Minute}},
		{"batch-by-rack", racks, RolloutConfig{ByRack: true, Health: HealthGate{Checks: 2, Interval: 5 * time.Second, Timeout: time.Minute}}},
		{"batch-by-rack-unknown", twoClusters, RolloutConfig{ByRack: true, Batch: 3}},
		{"batch-by-rack-inventory", twoClusters, RolloutConfig{ByRack: true, Batch: 2, Racks: map[string]string{"a1": "r1", "a2": "r2", "a3": "r1", "b1": "r1"}}},
		{"batch-by-rack-metadata-wins", racks, RolloutConfig{ByRack: true, Racks: map[string]string{"a1": "r9", "a2": "r9"}}},
		{"inventory-groups", groups, RolloutConfig{Batch: 4}},
		{"restart", &gatedA, RolloutConfig{Batch: 2, Restart: true}},
		{"restart-watch-pause", &gatedA, RolloutConfig{Batch: 2, Restart: true, Watch: 2 * time.Minute, Pause: 45 * time.Second}},
	}
	unproven := &report.Report{Hosts: []report.Host{
		broker("a1", "KA", 1, "all", "kafka", "kafka_a"), broker("b1", "KB", 1, "all", "kafka", "kafka_b"), broker("a2", "KA", 2, "all", "kafka", "kafka_a"),
		broker("a4", "", 0, "all", "kafka", "kafka_a"), broker("b2", "KB", 2, "all", "kafka", "kafka_b"),
	}, Cluster: proven("KA", "a1", "a2")}
	onlyA := &report.Report{Hosts: append(unproven.Hosts[:3:3], broker("a4", "", 0, "all", "kafka_a"), unproven.Hosts[4]), Cluster: unproven.Cluster}
	cases = append(cases, struct {
		name string
		r    *report.Report
		cfg  RolloutConfig
	}{"unknown-cluster-joins-all-it-may-be-in", unproven, RolloutConfig{Batch: 2}}, struct {
		name string
		r    *report.Report
		cfg  RolloutConfig
	}{"unknown-cluster-joins-its-group", onlyA, RolloutConfig{Batch: 2}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			WriteRollout(&b, PlanRollout(c.r, names(c.r), c.cfg), map[string]bool{"a2": true, "b1": true})
			golden := filepath.Join("testdata", "rollout-"+c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("plan:\n%s\nwant (%s):\n%s", b.String(), golden, want)
			}
		})
	}
}

// TestRolloutMinimum: the plan's minimum counts every wait the rollout
// makes, one after another: the gate (checks-1 intervals) before the
// first step, between two and after the last; after a restarted broker
// the longer of the gate and --watch, then the gate before the next
// step; --pause after the gate when an ungated cluster goes on.
func TestRolloutMinimum(t *testing.T) {
	gated := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1, "kafka"), broker("a2", "KA", 2, "kafka"), broker("a3", "KA", 3, "kafka")},
		Cluster: proven("KA", "a1", "a2", "a3")}
	two := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1, "kafka"), broker("b1", "KB", 1, "kafka_b"), broker("a2", "KA", 2, "kafka"),
		broker("b2", "KB", 2, "kafka_b")}, Cluster: proven("KA", "a1", "a2")}
	gate := RolloutConfig{Health: HealthGate{Checks: 3, Interval: 10 * time.Second}} // 20s a gate
	withRestart := gate
	withRestart.Restart, withRestart.Watch = true, 5*time.Minute
	shortWatch := withRestart
	shortWatch.Watch = 5 * time.Second
	paused := gate
	paused.Batch, paused.Pause = 2, time.Minute
	cases := []struct {
		name    string
		r       *report.Report
		cfg     RolloutConfig
		restart map[string]bool
		want    time.Duration
	}{
		{"gated, no restart: 4 gates", gated, gate, map[string]bool{"a2": true}, 80 * time.Second},
		{"restart of a2: gate, max(gate, watch) + gate, gate", gated, withRestart, map[string]bool{"a2": true}, 20*time.Second + 20*time.Second + 5*time.Minute + 20*time.Second + 20*time.Second},
		{"restart of the last broker: the watch ends the run", gated, withRestart, map[string]bool{"a3": true}, 3*20*time.Second + 5*time.Minute},
		{"watch shorter than the gate: the gate", gated, shortWatch, map[string]bool{"a2": true}, 5 * 20 * time.Second},
		{"--restart but no broker needs one", gated, withRestart, nil, 80 * time.Second},
		// waves [a1] [a2 b1] [b2]: gate 20 | gate 20 | gate 20 + pause 60 (b2 after b1)
		{"gate then pause, one after another", two, paused, nil, 20*time.Second + 20*time.Second + 20*time.Second + time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PlanRollout(c.r, names(c.r), c.cfg).Minimum(c.restart); got != c.want {
				t.Errorf("minimum %s, want %s", got, c.want)
			}
		})
	}
}

// TestRestartOptions: with --restart, the brokers of a cluster without
// a gate are refused a restart (kaudit cannot see that cluster healthy
// again); the gated cluster's are not; the defaults fill what was left 0.
func TestRestartOptions(t *testing.T) {
	r := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1, "kafka"), broker("b1", "KB", 1, "kafka")}, Cluster: proven("KA", "a1")}
	if o := PlanRollout(r, names(r), RolloutConfig{}).restartOptions(); o != nil {
		t.Fatalf("no --restart: options %+v", o)
	}
	o := PlanRollout(r, names(r), RolloutConfig{Restart: true}).restartOptions()
	if o.Refuse["a1"] != "" || !strings.Contains(o.Refuse["b1"], "no health gate for its cluster (not the cluster of --bootstrap (KA)") {
		t.Errorf("refused: %q", o.Refuse)
	}
	if o.Timeout != DefaultRestartTimeout || o.Watch != DefaultWatch {
		t.Errorf("defaults %s %s", o.Timeout, o.Watch)
	}
}

// TestRolloutNeverTwoOfOneCluster: whatever --batch, no wave holds two
// brokers of one cluster (or, by rack, two racks).
func TestRolloutNeverTwoOfOneCluster(t *testing.T) {
	r := &report.Report{Hosts: []report.Host{
		broker("a1", "KA", 1), broker("b1", "KB", 1), broker("a2", "KA", 2), broker("c1", "KC", 1), broker("b2", "KB", 2), broker("a3", "KA", 3),
	}}
	for batch := 1; batch <= 4; batch++ {
		ro := PlanRollout(r, names(r), RolloutConfig{Batch: batch})
		seen := 0
		for i, w := range ro.Waves {
			clusters := map[int]bool{}
			for _, h := range w {
				if clusters[ro.unit[h]] {
					t.Errorf("--batch %d: wave %d %v holds two brokers of %s", batch, i+1, w, ro.Units[ro.unit[h]].Name)
				}
				clusters[ro.unit[h]] = true
			}
			if len(w) > batch || (i == 0 && len(w) != 1) {
				t.Errorf("--batch %d: wave %d is %v", batch, i+1, w)
			}
			seen += len(w)
		}
		if seen != 6 {
			t.Errorf("--batch %d: %d hosts in the waves, want 6", batch, seen)
		}
	}
}

// healths is a cluster read by the gate: each read the next answer (the
// last one repeats); an error answer is a read that failed.
type healths struct {
	answers []any // *discover.Health or error
	reads   int
}

func (h *healths) read(context.Context) (*discover.Health, error) {
	a := h.answers[min(h.reads, len(h.answers)-1)]
	h.reads++
	if err, ok := a.(error); ok {
		return nil, err
	}
	return a.(*discover.Health), nil
}

func health(isr ...int32) *discover.Health {
	return &discover.Health{Brokers: []int32{1, 2, 3}, MinISR: map[string]int{"orders": 2},
		Partitions: []discover.Partition{{Topic: "orders", Partition: 0, Leader: 1, Replicas: []int32{1, 2, 3}, ISR: isr}}}
}

// testGate is the gate of a two-broker rollout of cluster KA (a1 node 1,
// a2 node 2), reading h, with fast intervals.
func testGate(h *healths, checks int) (*healthGate, *bytes.Buffer) {
	r := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1), broker("a2", "KA", 2)}, Cluster: proven("KA", "a1", "a2")}
	ro := PlanRollout(r, names(r), RolloutConfig{Health: HealthGate{Checks: checks, Interval: time.Millisecond, Timeout: 200 * time.Millisecond}})
	var out bytes.Buffer
	g := newHealthGate(Console{Stderr: &out, Now: time.Now}, ro, r.Cluster, nil)
	g.read, g.expect, g.cluster = h.read, []int32{1, 2, 3}, "KA"
	return g, &out
}

var full = []int32{1, 2, 3}

// TestGateWaits: the gate's decisions from the reads it makes: it waits
// for --health-checks consecutive healthy reads (an unhealthy read or a
// failed one starts the count again), stops when the timeout passes
// naming what kept the cluster unhealthy, and refuses a broker that holds
// a partition at min.insync.replicas.
func TestGateWaits(t *testing.T) {
	lost := errors.New("dial tcp 127.0.0.1:9092: connection refused")
	cases := []struct {
		name    string
		answers []any
		reads   int    // reads made, when it passes
		err     string // what the refusal says ("" passes)
	}{
		{"healthy at once", []any{health(full...)}, 3, ""},
		{"URP before the first broker clears", []any{health(1, 2), health(1, 2), health(full...)}, 5, ""},
		{"a healthy read between URPs counts from 0", []any{health(full...), health(full...), health(1, 3), health(full...)}, 6, ""},
		{"never clears", []any{health(1, 3)}, 0, "not healthy before a1 within --health-timeout 200ms: unhealthy: under-replicated orders-0 (replicas [1,2,3], isr [1,3])"},
		{"offline", []any{&discover.Health{Brokers: full, Partitions: []discover.Partition{{Topic: "orders", Partition: 3, Leader: -1, Replicas: []int32{2, 3}}}}}, 0, "offline orders-3 (replicas [2,3])"},
		{"broker not registered", []any{&discover.Health{Brokers: []int32{1, 3}}}, 0, "broker 2 not registered"},
		{"connection lost is unhealthy", []any{health(full...), health(full...), lost}, 0, "could not read the cluster (counted unhealthy): " + lost.Error()},
		{"lost then back", []any{lost, lost, health(full...)}, 5, ""},
		{"at min.insync.replicas", []any{&discover.Health{Brokers: full, MinISR: map[string]int{"orders": 2},
			Partitions: []discover.Partition{{Topic: "orders", Partition: 1, Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}}}}, 0,
			"refused to change a1: orders-1 (isr [1,2], min.insync.replicas 2, held by broker 1): taking it down would stop acks=all producers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &healths{answers: c.answers}
			g, out := testGate(h, 3)
			err := g.Gate(context.Background(), nil, []string{"a1"})
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("refused: %v\n%s", err, out)
			case c.err == "" && h.reads != c.reads:
				t.Errorf("%d reads, want %d\n%s", h.reads, c.reads, out)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("error %v, want %q\n%s", err, c.err, out)
			}
		})
	}
}

// TestGateBetweenBrokers: after a broker, URP appearing is waited out
// before the next; the gate before the first broker is not repeated.
func TestGateBetweenBrokers(t *testing.T) {
	h := &healths{answers: []any{health(full...)}}
	g, out := testGate(h, 2)
	if err := g.Gate(context.Background(), nil, []string{"a1"}); err != nil || h.reads != 2 {
		t.Fatalf("before a1: %v after %d reads", err, h.reads)
	}
	h.answers, h.reads = []any{health(1, 3), health(1, 3), health(full...)}, 0
	if err := g.Gate(context.Background(), []string{"a1"}, []string{"a2"}); err != nil || h.reads != 4 {
		t.Fatalf("between a1 and a2: %v after %d reads, want 4\n%s", err, h.reads, out)
	}
	if !strings.Contains(out.String(), "cluster KA after a1: unhealthy: under-replicated orders-0") || !strings.Contains(out.String(), "cluster KA after a1: healthy") {
		t.Errorf("no line per state change:\n%s", out)
	}
}

// TestGateInterrupted: Ctrl-C during a wait starts nothing and says where
// the run stands.
func TestGateInterrupted(t *testing.T) {
	h := &healths{answers: []any{health(1, 3)}}
	g, _ := testGate(h, 3)
	g.cfg.Health.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	err := g.Gate(ctx, []string{"a1"}, []string{"a2"})
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "to be healthy after a1: nothing further started") {
		t.Errorf("interrupted gate: %v", err)
	}
}

// TestGateOffPauses: without --bootstrap brokers of one cluster are
// paused between, never gated.
func TestGateOffPauses(t *testing.T) {
	r := &report.Report{Hosts: []report.Host{broker("a1", "KA", 1), broker("a2", "KA", 2)}}
	ro := PlanRollout(r, names(r), RolloutConfig{Pause: 30 * time.Millisecond})
	var out bytes.Buffer
	g := newHealthGate(Console{Stderr: &out, Now: time.Now}, ro, nil, nil)
	if err := g.Gate(context.Background(), nil, []string{"a1"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := g.Gate(context.Background(), []string{"a1"}, []string{"a2"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || !strings.Contains(out.String(), "pausing 30ms (--pause) before a2") {
		t.Errorf("paused %v:\n%s", d, out.String())
	}
	if !reflect.DeepEqual(ro.Waves, [][]string{{"a1"}, {"a2"}}) {
		t.Errorf("waves %v", ro.Waves)
	}
}

// TestRollbackRollout: a rollback (which gathers nothing) rolls the
// hosts the run changed by their inventory groups, or, for the brokers of
// --bootstrap without an inventory, as that cluster, gated.
func TestRollbackRollout(t *testing.T) {
	jr := &remediate.Journal{RunID: "20260101T000000Z-00000001"}
	for _, h := range []string{"a1", "a2", "b1", "c1"} {
		hj := remediate.HostJournal{Host: h, Status: remediate.StatusVerified, Runtime: []remediate.RuntimeValue{{Key: "net.core.somaxconn", Changed: remediate.ChangedYes}}}
		if h == "c1" {
			hj.Runtime[0].Changed = remediate.ChangedNo // the run changed nothing there
		}
		jr.Hosts = append(jr.Hosts, hj)
	}
	hosts := []inventory.Host{{Name: "a1", Groups: []string{"all", "ka"}}, {Name: "a2", Groups: []string{"all", "ka"}, Rack: "r2"},
		{Name: "b1", Groups: []string{"all", "kb"}}, {Name: "c1", Groups: []string{"all", "kb"}}}
	ro := rollbackRollout(hosts, jr, RollbackJob{Rollout: RolloutConfig{Batch: 2}})
	if want := [][]string{{"a1"}, {"a2", "b1"}}; !reflect.DeepEqual(ro.Waves, want) || ro.Units[0].Gated {
		t.Errorf("waves %v (gated %v), want %v ungated", ro.Waves, ro.Units[0].Gated, want)
	}
	src := &ClusterSource{found: &discover.Cluster{ID: "KA", Brokers: []discover.Broker{{NodeID: 1}, {NodeID: 2}, {NodeID: 3}, {NodeID: 4}}}}
	ro = rollbackRollout(hosts, jr, RollbackJob{Rollout: RolloutConfig{Batch: 2}, cluster: src})
	if len(ro.Units) != 1 || !ro.Units[0].Gated || len(ro.Waves) != 3 || ro.cluster == nil || len(ro.cluster.Brokers) != 4 {
		t.Errorf("discovered brokers: units %+v waves %v", ro.Units, ro.Waves)
	}
}

// TestRollbackRestartPlan: rollback --restart marks the brokers whose run
// made a change that needs a restart (restartsOf) and restarts them only
// in the gated cluster of --bootstrap; its minimum counts the watch.
func TestRollbackRestartPlan(t *testing.T) {
	backlog := remediate.Change{Kind: remediate.KindKafkaProperty, Target: "socket.listen.backlog.size", Persist: true, PersistPath: "/k/server.properties", RestartRequired: true}
	jr := &remediate.Journal{RunID: "20260101T000000Z-00000001"}
	for _, h := range []string{"a1", "a2"} {
		hj := remediate.HostJournal{Host: h, Status: remediate.StatusVerified, Backups: []remediate.Backup{{Path: "/k/server.properties", Existed: true, Changed: remediate.ChangedYes}}}
		if h == "a2" {
			hj.Changes = []remediate.Change{backlog}
		}
		jr.Hosts = append(jr.Hosts, hj)
	}
	if got := restartsOf(jr); !reflect.DeepEqual(got, map[string]bool{"a2": true}) {
		t.Fatalf("restarts %v, want a2's", got)
	}
	hosts := []inventory.Host{{Name: "a1", Groups: []string{"ka"}}, {Name: "a2", Groups: []string{"ka"}}}
	cfg := RolloutConfig{Restart: true, Watch: time.Minute, Health: HealthGate{Checks: 2, Interval: 10 * time.Second}}
	src := &ClusterSource{found: &discover.Cluster{ID: "KA", Brokers: []discover.Broker{{NodeID: 1}, {NodeID: 2}}}}
	ro := rollbackRollout(hosts, jr, RollbackJob{Rollout: cfg, cluster: src})
	var b strings.Builder
	WriteRollout(&b, ro, restartsOf(jr))
	// gate 10s before a1, 10s between, after a2's restart max(10s, 1m)
	if !strings.Contains(b.String(), "a2 [restart: through its systemd unit (--restart), then watched]") || !strings.Contains(b.String(), "minimum 1m20s of waits") {
		t.Errorf("plan:\n%s", b.String())
	}
	if o := ro.restartOptions(); o == nil || len(o.Refuse) != 0 || o.Watch != time.Minute {
		t.Errorf("gated: restart options %+v", o)
	}
	ro = rollbackRollout(hosts, jr, RollbackJob{Rollout: cfg})
	if o := ro.restartOptions(); o == nil || !strings.Contains(o.Refuse["a2"], "no health gate for its cluster") {
		t.Errorf("ungated: restart options %+v", o)
	}
}
