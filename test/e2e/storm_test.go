//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

// Held connections from the producer, over IPv4 and IPv6.
const (
	stormV4 = 240
	stormV6 = 60
)

// TestReconnectStormAndProducers: a Kafka 2.8.1 broker (backlog 50) and a
// producer host wired by a veth pair of their own (10.77.0.0/24 and
// fd77::/64: nothing routed through this machine's namespace) with 300
// connections held from the producer to the broker's :9092, both in the
// inventory, the producer in the clients group; and a Confluent 7.1.7
// broker (KIP-764 backported) whose property is honoured. kaudit must count
// the 300 clients against the effective backlog read from Send-Q and match
// every connection from both ends.
func TestReconnectStormAndProducers(t *testing.T) {
	requireEnv(t)
	kauditBin(t)
	f := testfleet.Start(t, []testfleet.HostSpec{
		{Name: "storm", Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "4096"),
			Kafka: &testfleet.BrokerSpec{Version: "2.8.1"}},
		{Name: "cp717", Sysctls: base("net.ipv4.tcp_syncookies", "1", "net.core.somaxconn", "4096"),
			Kafka: &testfleet.BrokerSpec{Version: "7.1.7", Confluent: true, Properties: map[string]string{"socket.listen.backlog.size": "2048"}}},
		{Name: "producer", Sysctls: base("net.ipv4.tcp_syncookies", "1")},
	})
	broker, cp, prod := f.Host("storm"), f.Host("cp717"), f.Host("producer")
	f.Wire(t, broker, prod, 0, []string{"10.77.0.1/24", "fd77::1/64"}, []string{"10.77.0.2/24", "fd77::2/64"})
	prod.Dial(t, "10.77.0.1:9092", stormV4)
	prod.Dial(t, "[fd77::1]:9092", stormV6)

	// Ground truth, read inside the broker: Send-Q of the listener and the
	// producer's connections the kernel holds.
	sendQ := strings.Fields(broker.ExecNet(t, "ss", "-Hltn", "sport = :9092"))
	est := strings.Count(broker.ExecNet(t, "ss", "-Htn", "state", "established", "( sport = :9092 )"), "\n")
	if len(sendQ) < 3 || sendQ[2] != "50" || est != stormV4+stormV6 {
		t.Fatalf("fixture: listener %v, %d established (want Send-Q 50, %d)", sendQ, est, stormV4+stormV6)
	}
	cpQ := strings.Fields(cp.ExecNet(t, "ss", "-Hltn", "sport = :9092"))
	if len(cpQ) < 3 || cpQ[2] != "2048" {
		t.Fatalf("fixture: CP 7.1.7 listener %v, want Send-Q 2048 (the backport honours the property); ss -ltnp:\n%s\nps:\n%s",
			cpQ, cp.ExecNet(t, "ss", "-ltnp"), cp.Exec(t, "ps", "-ef"))
	}

	inv := stormInventory(t, f, broker, cp, prod)
	r := scan(t, runOpts{}, inv, "--concurrency", "3", "--timeout", "30s", "--connect-timeout", "5s")
	if os.Getenv("KAUDIT_E2E_DUMP") != "" {
		t.Logf("report:\n%s", r.JSON)
	}
	for _, h := range r.Report.Hosts {
		if h.Error != nil {
			t.Errorf("%s not audited: %+v", h.Name, h.Error)
		}
	}
	rb := r.host(t, "storm")
	storm := finding(rb, rules.RuleReconnectStorm)
	wantStorm := "300 clients on :9092 vs an effective backlog of 50: a restart sends ~6.0× the SYNs the queue holds"
	if storm == nil || storm.Status != rules.Fail || storm.Observed != wantStorm {
		t.Errorf("reconnect-storm on storm: %+v\nwant fail %q", storm, wantStorm)
	} else {
		t.Logf("storm figures: %s (%s)", storm.Observed, strings.Join(storm.Evidence, "; "))
	}
	mm := finding(rb, rules.RuleClientWscaleMismatch)
	wantMM := fmt.Sprintf("%d connections matched from 1 client hosts, 0 with mismatched scale", stormV4+stormV6)
	if mm == nil || mm.Status != rules.Pass || mm.Observed != wantMM {
		t.Errorf("client-wscale-mismatch on storm: %+v\nwant pass %q", mm, wantMM)
	} else {
		t.Logf("matched: %s", mm.Observed)
	}
	if rb.Facts == nil || rb.Facts.ConnsTotal != stormV4+stormV6 || len(rb.Facts.Conns) != stormV4+stormV6 {
		t.Errorf("broker connections: facts %v", rb.Facts != nil)
	}

	rp := r.host(t, "producer")
	if rp.Facts == nil || rp.Facts.Role != "client" || len(rp.Facts.Conns) != stormV4+stormV6 {
		t.Fatalf("producer facts: %+v, error %+v", rp.Facts, rp.Error)
	}
	for _, fd := range rp.Findings {
		cat, _ := rules.Lookup(fd.Rule)
		if !cat.Clients && fd.Status != rules.Skip {
			t.Errorf("producer: %s %s %q, want skip (client host)", fd.Rule, fd.Status, fd.Reason)
		}
	}

	rc := r.host(t, "cp717")
	for rule, want := range map[string]rules.Status{
		rules.RuleKafkaBacklogHardcoded: rules.Pass, rules.RuleKafkaBacklogConfig: rules.Fail,
		rules.RuleListenBacklogEffective: rules.Fail, rules.RuleReconnectStorm: rules.Pass,
		rules.RuleClientWscaleMismatch: rules.Unknown, // no producer talks to it
	} {
		if fd := finding(rc, rule); fd == nil || fd.Status != want {
			t.Errorf("cp717 %s: %+v, want %s", rule, fd, want)
		}
	}

	// The fix plan sets the backported property on the CP 7.1.7 broker,
	// and --apply writes it into its server.properties.
	fix := runKaudit(t, runOpts{}, "fix", inv, "--limit", "cp717", "--rules", rules.RuleKafkaBacklogConfig,
		"--apply", "--yes", "--journal-dir", t.TempDir(), "--timeout", "30s")
	if fix.Code != 0 || !strings.Contains(fix.Stdout, "socket.listen.backlog.size") {
		t.Fatalf("fix on cp717: exit %d\n%s\n%s", fix.Code, fix.Stdout, fix.Stderr)
	}
	props := cp.Exec(t, "cat", cp.KafkaConfig)
	if !strings.Contains(props, "socket.listen.backlog.size=4096") {
		t.Errorf("server.properties after fix --apply:\n%s", props)
	}
}

// stormInventory is the fleet's inventory with the producer in the clients group.
func stormInventory(t *testing.T, f *testfleet.Fleet, brokers ...*testfleet.Host) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  user: %s\n  identity_files: [%q]\n  use_agent: false\n  known_hosts: [%q]\n  host_key_policy: strict\n  kafka: {port: 9092}\n  interfaces: [eth0]\n",
		f.User, f.IdentityFile, f.KnownHosts)
	b.WriteString("groups:\n  kafka:\n    hosts:\n")
	var prod *testfleet.Host
	for _, h := range brokers {
		if h.Spec.Kafka == nil {
			prod = h
			continue
		}
		fmt.Fprintf(&b, "      %s: {address: %s, port: %d}\n", h.Spec.Name, h.Addr, h.Port)
	}
	fmt.Fprintf(&b, "  clients:\n    hosts:\n      %s: {address: %s, port: %d}\n", prod.Spec.Name, prod.Addr, prod.Port)
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
