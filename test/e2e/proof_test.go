//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/test/testfleet"
)

// discoveredSSHConfig is an ssh_config reaching each of hosts by its
// address (as a cluster advertises it) with fleet f's key; known_hosts
// and StrictHostKeyChecking as given.
func discoveredSSHConfig(t *testing.T, f *testfleet.Fleet, hosts []*testfleet.Host, knownHosts, strict string) string {
	t.Helper()
	var conf strings.Builder
	global := writeTempFile(t, "ssh_known_hosts", "") // kaudit takes no /dev/null for a known_hosts file
	for _, h := range hosts {
		fmt.Fprintf(&conf, "Host %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile %s\n  StrictHostKeyChecking %s\n",
			h.Addr, f.User, f.IdentityFile, knownHosts, global, strict)
	}
	return writeTempFile(t, "ssh_config", conf.String())
}

// TestFixBootstrapUnproven: a cluster (kfake, its answers the attacker's)
// advertises three hosts the user's key reaches, no inventory: ku0's
// meta.properties proves it broker 0, ku1 has none, ku2's names another
// cluster. fix --apply --yes changes ku0 alone (the files on the hosts),
// lists the others as not proven, exits 4. Then the run's journal, made
// world-writable, is refused; edited (a file kaudit never wrote, a
// running value it never set), its rollback restores only what ku0's own
// manifest holds and refuses the rest, named; ku1 and ku2 are not rolled
// back either.
func TestFixBootstrapUnproven(t *testing.T) {
	requireEnv(t)
	const cluster = "E2EunprovenCluster0001"
	props := map[string]string{"log.dirs": "/var/lib/kafka-data", "socket.listen.backlog.size": "2048"}
	spec := func(name string, files map[string]string) testfleet.HostSpec {
		return testfleet.HostSpec{Name: name, Sysctls: base(), Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: props}, Files: files}
	}
	f := testfleet.Start(t, []testfleet.HostSpec{
		spec("ku0", map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, 0), "/etc/kaudit-victim.conf": "keep me\n"}),
		spec("ku1", map[string]string{"/var/lib/kafka-data/.keep": ""}),
		spec("ku2", map[string]string{"/var/lib/kafka-data/meta.properties": metaProps("OtherClusterId", 2)}),
	})
	hosts := f.Hosts
	kfakeIn(t, hosts, kfake.ClusterID(cluster), kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "50"}))
	conf := discoveredSSHConfig(t, f, hosts, f.KnownHosts, "yes")
	bootstrap := hosts[0].Addr + ":9093"
	journal := filepath.Join(t.TempDir(), "journal")
	backlog := func(h *testfleet.Host) string {
		return strings.TrimSpace(h.Exec(t, "grep", "^socket.listen.backlog.size=", h.KafkaConfig))
	}

	// The probe sends no traffic to a host the cluster names unproven.
	out := filepath.Join(t.TempDir(), "probe.json")
	p := decode(t, runKaudit(t, runOpts{}, "scan", "--bootstrap", bootstrap, "--ssh-config", conf, "--probe", "--quiet", "--format", "json", "-o", out), out)
	if p.Report == nil {
		t.Fatalf("scan --probe: exit %d\n%s", p.Code, p.Stderr)
	}
	for i, h := range hosts {
		pr := p.host(t, h.Addr).Facts.Probe
		if pr == nil || (pr.State == facts.ProbeUnproven) != (i > 0) {
			t.Errorf("%s: probe %+v, want unproven only on ku1 and ku2", h.Spec.Name, pr)
		} else {
			t.Logf("%s: probe %s: %s", h.Spec.Name, pr.State, pr.Reason)
		}
	}

	r := runKaudit(t, runOpts{}, "fix", "--bootstrap", bootstrap, "--ssh-config", conf, "--quiet", "--width", "300",
		"--apply", "--yes", "--rules", "kafka-backlog-config", "--journal-dir", journal)
	t.Logf("fix --apply: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	if r.Code != 4 {
		t.Errorf("exit %d, want 4 (hosts not proven were not changed)", r.Code)
	}
	for _, want := range []string{
		hosts[1].Addr + ": not changed: not proven a broker of cluster " + cluster + " (no meta.properties could be read",
		hosts[2].Addr + ": not changed: not proven a broker of cluster " + cluster + " (/var/lib/kafka-data/meta.properties says cluster OtherClusterId node 2)",
		"1 host changed and verified",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("fix --apply does not say %q", want)
		}
	}
	if b := backlog(hosts[0]); b == "socket.listen.backlog.size=2048" {
		t.Errorf("ku0, proven, was not changed: %s", b)
	}
	for _, h := range hosts[1:] {
		if b := backlog(h); b != "socket.listen.backlog.size=2048" {
			t.Errorf("%s, not proven, was changed: %s", h.Spec.Name, b)
		}
		if out, _ := h.ExecErr("ls", "/var/lib/kaudit/runs"); strings.TrimSpace(out) != "" {
			t.Errorf("%s, not proven, has runs: %q", h.Spec.Name, out)
		}
	}
	var run string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if u, ok := strings.CutPrefix(l, "undo: "); ok {
			run = u[strings.LastIndex(u, " ")+1:]
		}
	}
	if run == "" {
		t.Fatalf("no undo line")
	}
	jpath := filepath.Join(journal, run+".json")
	rollback := func() result {
		return runKaudit(t, runOpts{}, "rollback", "--bootstrap", bootstrap, "--ssh-config", conf, "--journal-dir", journal, "--run", run, "--yes")
	}

	// A journal others may write is refused before anything is restored.
	must(t, os.Chmod(jpath, 0o666))
	rb := rollback()
	if rb.Code != 2 || !strings.Contains(rb.Stderr, "journal "+jpath+" is writable by group or others (mode 0666): refused") {
		t.Errorf("world-writable journal: exit %d\n%s%s", rb.Code, rb.Stdout, rb.Stderr)
	}
	if b := backlog(hosts[0]); b == "socket.listen.backlog.size=2048" {
		t.Errorf("ku0 restored from a world-writable journal")
	}
	must(t, os.Chmod(jpath, 0o600))

	// The journal edited: ku0's entry names a file the run never wrote
	// (removed if trusted) and ip_forward "1 before the run".
	j, err := remediate.LoadJournal(jpath)
	must(t, err)
	hj := j.Host(hosts[0].Addr)
	if hj == nil {
		t.Fatalf("no journal entry for %s", hosts[0].Addr)
	}
	hj.Backups = append(hj.Backups, remediate.Backup{Path: "/etc/kaudit-victim.conf", Existed: false, Changed: remediate.ChangedYes})
	hj.Runtime = append(hj.Runtime, remediate.RuntimeValue{Kind: remediate.KindSysctl, Key: "net.ipv4.ip_forward", Before: "1", After: "0", Changed: remediate.ChangedYes})
	must(t, j.Save(jpath))
	rb = rollback()
	t.Logf("rollback of the edited journal: exit %d\n%s%s", rb.Code, rb.Stdout, rb.Stderr)
	if rb.Code != 4 {
		t.Errorf("exit %d, want 4", rb.Code)
	}
	for _, want := range []string{
		"REFUSED: file /etc/kaudit-victim.conf: the run's manifest on the host does not hold it",
		"REFUSED: sysctl net.ipv4.ip_forward: the run's manifest on the host does not hold it",
		hosts[1].Addr + ": not rolled back: not proven a broker of cluster " + cluster,
		hosts[2].Addr + ": not rolled back: not proven a broker of cluster " + cluster,
	} {
		if !strings.Contains(rb.Stdout, want) {
			t.Errorf("rollback does not say %q", want)
		}
	}
	if b := backlog(hosts[0]); b != "socket.listen.backlog.size=2048" {
		t.Errorf("ku0: the run's own change not rolled back: %s", b)
	}
	if got := hosts[0].Exec(t, "cat", "/etc/kaudit-victim.conf"); got != "keep me\n" {
		t.Errorf("ku0: /etc/kaudit-victim.conf is %q after the rollback", got)
	}
	if got := strings.TrimSpace(hosts[0].Exec(t, "cat", "/proc/sys/net/ipv4/ip_forward")); got != "0" {
		t.Errorf("ku0: ip_forward %s after the rollback, want 0", got)
	}

	// An inventory host whose meta.properties names another cluster is
	// refused the same way, until --accept-cluster-mismatch names it.
	inv := writeInventory(t, f, entry(hosts[2]))
	fix := func(extra ...string) result {
		return runKaudit(t, runOpts{}, append([]string{"fix", inv, "--bootstrap", bootstrap, "--quiet", "--width", "300", "--apply", "--yes",
			"--rules", "kafka-backlog-config", "--journal-dir", journal}, extra...)...)
	}
	r = fix()
	if r.Code != 4 || !strings.Contains(r.Stdout, "ku2: not changed: not proven a broker of cluster "+cluster+" (its meta.properties names cluster OtherClusterId; --accept-cluster-mismatch HOST accepts it)") {
		t.Errorf("inventory host of another cluster: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if b := backlog(hosts[2]); b != "socket.listen.backlog.size=2048" {
		t.Errorf("ku2 changed without --accept-cluster-mismatch: %s", b)
	}
	r = fix("--accept-cluster-mismatch", "ku2")
	if r.Code != 0 || backlog(hosts[2]) == "socket.listen.backlog.size=2048" {
		t.Errorf("--accept-cluster-mismatch ku2: exit %d, %s\n%s%s", r.Code, backlog(hosts[2]), r.Stdout, r.Stderr)
	}
}

// TestHostKeyNeverSilent: ssh_config says StrictHostKeyChecking no and
// known_hosts is empty. A host only the cluster names is not trusted on
// first use (unreachable: hostkey, nothing recorded); an inventory host
// is, and the key kaudit records is said on stderr with the host, its
// fingerprint and the file.
func TestHostKeyNeverSilent(t *testing.T) {
	requireEnv(t)
	const cluster = "E2EhostkeyCluster00001"
	f := testfleet.Start(t, []testfleet.HostSpec{{Name: "kk0", Sysctls: base(),
		Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"log.dirs": "/var/lib/kafka-data"}},
		Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, 0)}}})
	h := f.Hosts[0]
	kfakeIn(t, f.Hosts, kfake.ClusterID(cluster))
	kh := writeTempFile(t, "known_hosts", "")
	conf := discoveredSSHConfig(t, f, f.Hosts, kh, "no")

	out := filepath.Join(t.TempDir(), "out.json")
	r := decode(t, runKaudit(t, runOpts{}, "scan", "--bootstrap", h.Addr+":9093", "--ssh-config", conf, "--format", "json", "-o", out, "--quiet"), out)
	t.Logf("scan --bootstrap: exit %d\n%s", r.Code, r.Stderr)
	if r.Report == nil || r.host(t, h.Addr).Error == nil || r.host(t, h.Addr).Error.Kind != "hostkey" {
		t.Errorf("a host the cluster names was trusted on first use")
	}
	if data, _ := os.ReadFile(kh); len(data) != 0 {
		t.Errorf("known_hosts written for a host the cluster names: %q", data)
	}

	// Named by its address, so that ssh_config's Host line matches it.
	inv := writeTempFile(t, "inventory.yaml", fmt.Sprintf("hosts:\n  %s:\n    kafka: {port: 9092}\n", h.Addr))
	r = runKaudit(t, runOpts{}, "scan", inv, "--ssh-config", conf, "--quiet", "--fail-on", "critical")
	data, err := os.ReadFile(kh)
	must(t, err)
	_, _, key, _, _, err := ssh.ParseKnownHosts(data)
	if err != nil {
		t.Fatalf("accept-new recorded nothing: %v\nstderr:\n%s", err, r.Stderr)
	}
	want := fmt.Sprintf("kaudit: warning: permanently added the host key of %s (%s %s) to %s", h.Addr, key.Type(), ssh.FingerprintSHA256(key), kh)
	if !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
	}
}
