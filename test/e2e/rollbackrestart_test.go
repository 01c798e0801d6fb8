//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/test/testfleet"
)

// TestRollbackRestart: kaudit rollback --restart on real sshd hosts, the
// brokers of a kfake cluster (no inventory, as fix's undo line gives
// it). fix --apply changed socket.listen.backlog.size on both (a change
// that needs a restart; not restarted, no --restart). The rollback plan
// marks both for a restart through systemd, gated; the rollback restores
// server.properties one broker at a time and, since these brokers run
// under no systemd unit (the fleet has no systemd: their cgroup is this
// machine's), restarts neither: each is said "NOT restarted" with the
// manual step and journalled (restart.refused), which is no failure
// (exit 0). The restart itself through a real kafka.service is the VM
// lab's (test/vm TestRestartStormStopsRollout, rollbackRestarts).
func TestRollbackRestart(t *testing.T) {
	requireEnv(t)
	const cluster = "E2ErollbackRestart0001"
	props := map[string]string{"log.dirs": "/var/lib/kafka-data", "socket.listen.backlog.size": "2048"}
	var specs []testfleet.HostSpec
	for i, name := range []string{"rr0", "rr1"} {
		specs = append(specs, testfleet.HostSpec{Name: name, Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, i)}})
	}
	f := testfleet.Start(t, specs)
	hosts := f.Hosts
	kfakeIn(t, hosts, kfake.ClusterID(cluster), kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "50"}))
	conf := discoveredSSHConfig(t, f, hosts, f.KnownHosts, "yes")
	bootstrap := hosts[0].Addr + ":9093"
	journal := filepath.Join(t.TempDir(), "journal")
	gate := []string{"--health-checks", "1", "--health-interval", "100ms", "--health-timeout", "20s"}
	backlog := func(h *testfleet.Host) string {
		return strings.TrimSpace(h.Exec(t, "grep", "^socket.listen.backlog.size=", h.KafkaConfig))
	}

	r := runKaudit(t, runOpts{}, append([]string{"fix", "--bootstrap", bootstrap, "--ssh-config", conf, "--quiet", "--width", "300",
		"--apply", "--yes", "--rules", "kafka-backlog-config", "--journal-dir", journal}, gate...)...)
	t.Logf("fix --apply: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	if r.Code != 0 {
		t.Fatalf("fix --apply: exit %d", r.Code)
	}
	var run string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if u, ok := strings.CutPrefix(l, "undo: "); ok {
			run = u[strings.LastIndex(u, " ")+1:]
		}
	}
	for _, h := range hosts {
		if b := backlog(h); b == "socket.listen.backlog.size=2048" {
			t.Fatalf("%s not changed by fix: %s", h.Spec.Name, b)
		}
	}
	if run == "" {
		t.Fatal("no undo line")
	}

	rb := runKaudit(t, runOpts{}, append([]string{"rollback", "--bootstrap", bootstrap, "--ssh-config", conf, "--journal-dir", journal,
		"--run", run, "--yes", "--restart", "--watch", "1s"}, gate...)...)
	t.Logf("rollback --restart: exit %d\n%s%s", rb.Code, rb.Stdout, rb.Stderr)
	if rb.Code != 0 {
		t.Errorf("rollback --restart: exit %d, want 0 (a refused restart is no failure)", rb.Code)
	}
	for _, h := range hosts {
		if want := h.Addr + " [restart: through its systemd unit (--restart), then watched]"; !strings.Contains(rb.Stdout, want) {
			t.Errorf("the rollback's plan lacks %q", want)
		}
		if want := h.Addr + ": broker restart required, NOT restarted: the broker (pid "; !strings.Contains(rb.Stderr, want) || !strings.Contains(rb.Stderr, "is not a systemd service") {
			t.Errorf("stderr lacks %q … not a systemd service", want)
		}
		if b := backlog(h); b != "socket.listen.backlog.size=2048" {
			t.Errorf("%s not rolled back: %s", h.Spec.Name, b)
		}
	}
	if !strings.Contains(rb.Stdout, "rollout: 1 cluster, one broker of a cluster at a time") || !strings.Contains(rb.Stdout, "health gate on") {
		t.Errorf("the rollback's rollout is not gated one broker at a time:\n%s", rb.Stdout)
	}
	j, err := remediate.LoadJournal(filepath.Join(journal, run+".json"))
	must(t, err)
	for _, h := range hosts {
		hj := j.Host(h.Addr)
		if hj == nil || hj.Status != remediate.StatusRolledBack || hj.Restart == nil || !strings.Contains(hj.Restart.Refused, "not a systemd service") || hj.Restart.NewPID != 0 {
			t.Errorf("%s: journal %+v", h.Spec.Name, hj)
		}
	}
}
