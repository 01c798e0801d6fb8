//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kaudit/kaudit/test/testfleet"
)

// The SCRAM users of TestBootstrapClients' cluster. The passwords must
// never appear in what kaudit prints or writes.
const (
	adminPass  = "Adm1n-e2e-Secret-7f3a"
	readerPass = "Read3r-e2e-Secret-91c2"
)

// TestBootstrapClients: kaudit scan --bootstrap over SASL_SSL
// (SCRAM-SHA-512, a CA and a server certificate made here) against three
// kfake brokers listening in the test hosts' namespaces: with the flags
// and with a client.properties, a wrong password, a user without
// DESCRIBE_CONFIGS, and no inventory (scan and fix, the hosts reached
// through an ssh_config by their advertised names). One fleet for all.
func TestBootstrapClients(t *testing.T) {
	requireEnv(t)
	const cluster = "E2EclientsCluster00001"
	var specs []testfleet.HostSpec
	for i := range 3 {
		specs = append(specs, testfleet.HostSpec{Name: fmt.Sprintf("kc%d", i), Sysctls: base(),
			Kafka: &testfleet.BrokerSpec{Version: "3.6.1", Properties: map[string]string{"log.dirs": "/var/lib/kafka-data", "socket.listen.backlog.size": "2048"}},
			Files: map[string]string{"/var/lib/kafka-data/meta.properties": metaProps(cluster, i)}})
	}
	f := testfleet.Start(t, specs)
	hosts := f.Hosts
	dir := t.TempDir()
	ca, srv := brokerCerts(t, hosts)
	caPEM := filepath.Join(dir, "ca.pem")
	must(t, os.WriteFile(caPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o644))
	kfakeIn(t, hosts, kfake.ClusterID(cluster), kfake.TLS(srv), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("SCRAM-SHA-512", "admin", adminPass),
		kfake.User("SCRAM-SHA-512", "reader", readerPass),
		kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "50"}))
	secret := func(name, pass string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(pass+"\n"), 0o600))
		return p
	}
	bootstrap := hosts[0].Addr + ":9093"
	client := func(user, passFile string) []string {
		return []string{"--bootstrap", bootstrap, "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-512",
			"--sasl-user", user, "--sasl-password-file", passFile, "--tls-ca", caPEM}
	}
	admin := client("admin", secret("admin.pw", adminPass))
	inv := writeInventory(t, f, entry(hosts[0]), entry(hosts[1]), entry(hosts[2]))
	noSecret := func(t *testing.T, r result) {
		t.Helper()
		for _, p := range []string{adminPass, readerPass, "nope-" + adminPass} {
			if strings.Contains(r.Stdout+r.Stderr+string(r.JSON), p) {
				t.Errorf("a password is in kaudit's output or report")
			}
		}
	}
	// proven checks that every broker is its host, proven, and that kc0
	// was judged by the running broker's backlog.
	proven := func(t *testing.T, r result, names ...string) {
		t.Helper()
		c := r.Report.Cluster
		if r.Code != 0 || c == nil || c.ID != cluster || len(c.Brokers) != 3 {
			t.Fatalf("exit %d, cluster %+v\nstderr:\n%s", r.Code, c, r.Stderr)
		}
		for i, b := range c.Brokers {
			if b.Host != names[i] || b.Proof != "proven" || b.Configs["socket.listen.backlog.size"].Value != "50" {
				t.Errorf("broker %d: %+v", b.NodeID, b)
			}
		}
		fd := finding(r.host(t, names[0]), "kafka-backlog-config")
		if fd == nil || !strings.Contains(fd.Observed, "the file says 2048") || !strings.Contains(fd.Observed, "the running broker uses 50 (dynamic)") {
			t.Errorf("%s kafka-backlog-config: %+v", names[0], fd)
		}
	}
	names := []string{"kc0", "kc1", "kc2"}

	t.Run("SASL_SSL SCRAM-SHA-512 flags", func(t *testing.T) {
		r := scan(t, runOpts{}, inv, append(admin, "--fail-on", "critical")...)
		proven(t, r, names...)
		noSecret(t, r)
	})
	t.Run("command-config", func(t *testing.T) {
		props := filepath.Join(dir, "client.properties")
		must(t, os.WriteFile(props, []byte("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"+
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"admin\" password=\""+adminPass+"\";\n"+
			"ssl.truststore.type=PEM\nssl.truststore.location="+caPEM+"\n"), 0o600))
		r := scan(t, runOpts{}, inv, "--bootstrap", bootstrap, "--command-config", props, "--fail-on", "critical")
		proven(t, r, names...)
		noSecret(t, r)
	})
	t.Run("wrong password", func(t *testing.T) {
		r := scan(t, runOpts{}, inv, client("admin", secret("wrong.pw", "nope-"+adminPass))...)
		want := " (hint: the broker closed the connection during SASL authentication (the TLS handshake succeeds): check the user name, the password and the mechanism)\n"
		if r.Code != 2 || r.Report != nil || !strings.HasPrefix(r.Stderr, "kaudit: error: bootstrap "+bootstrap+": ") || !strings.HasSuffix(r.Stderr, want) {
			t.Errorf("exit %d, report %v, stderr:\n%s", r.Code, r.Report != nil, r.Stderr)
		} else {
			t.Logf("wrong password: exit %d: %s", r.Code, r.Stderr)
		}
		noSecret(t, r)
	})
	t.Run("no DESCRIBE_CONFIGS", func(t *testing.T) {
		r := scan(t, runOpts{}, inv, append(client("reader", secret("reader.pw", readerPass)), "--fail-on", "critical")...)
		c := r.Report.Cluster
		if r.Code != 0 || c == nil || len(c.Brokers) != 3 || !strings.Contains(c.ConfigsError, "CLUSTER_AUTHORIZATION_FAILED") {
			t.Fatalf("exit %d, cluster %+v\nstderr:\n%s", r.Code, c, r.Stderr)
		}
		want := "kaudit: warning: cluster " + cluster + ": the running brokers' settings could not be read ("
		if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "): the rules judge the files read over SSH") {
			t.Errorf("stderr lacks the warning %q:\n%s", want, r.Stderr)
		}
		for _, b := range c.Brokers {
			if b.Proof != "proven" || b.Configs != nil {
				t.Errorf("broker %d: %+v", b.NodeID, b)
			}
		}
		fd := finding(r.host(t, "kc0"), "kafka-backlog-config")
		if fd == nil || !strings.HasPrefix(fd.Observed, "socket.listen.backlog.size=2048 (/opt/kafka_2.13-3.6.1/config/server.properties:") || strings.Contains(fd.Observed, "running") {
			t.Errorf("kc0 kafka-backlog-config, want the file's 2048: %+v", fd)
		} else {
			t.Logf("kc0 %s: %s %s", fd.Rule, fd.Status, fd.Observed)
		}
		noSecret(t, r)
	})

	// No inventory: the hosts are the advertised addresses, reached
	// through an ssh_config with a Host entry for each.
	var conf strings.Builder
	var addrs []string
	for _, h := range hosts {
		addrs = append(addrs, h.Addr)
		fmt.Fprintf(&conf, "Host %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n", h.Addr, f.User, f.IdentityFile, f.KnownHosts)
	}
	sshConfig := writeTempFile(t, "ssh_config", conf.String())
	t.Run("scan without an inventory", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.json")
		args := append([]string{"scan", "--ssh-config", sshConfig, "--format", "json", "-o", out, "--fail-on", "critical"}, admin...)
		r := decode(t, runKaudit(t, runOpts{}, args...), out)
		if r.Code != 0 || r.Report == nil {
			t.Fatalf("exit %d\nstderr:\n%s", r.Code, r.Stderr)
		}
		if r.Report.Inventory != "brokers of "+bootstrap || r.Report.Summary.Hosts != 3 || r.Report.Summary.Audited != 3 {
			t.Errorf("inventory %q, summary %+v", r.Report.Inventory, r.Report.Summary)
		}
		for _, a := range addrs {
			h := r.host(t, a)
			if fd := finding(h, "kafka-backlog-config"); fd == nil || !strings.Contains(fd.Observed, "the running broker uses 50 (dynamic)") {
				t.Errorf("%s kafka-backlog-config: %+v", a, fd)
			}
		}
		proven(t, r, addrs...)
		noSecret(t, r)
	})
	t.Run("fix without an inventory", func(t *testing.T) {
		r := runKaudit(t, runOpts{}, append([]string{"fix", "--ssh-config", sshConfig, "--quiet", "--width", "200"}, admin...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", r.Code, r.Stderr)
		}
		for _, a := range addrs {
			if !strings.Contains(r.Stdout, a) {
				t.Errorf("the plan has no host %s:\n%s", a, r.Stdout)
			}
		}
		if !strings.Contains(r.Stdout, "socket.listen.backlog.size") {
			t.Errorf("the plan has no backlog change:\n%s", r.Stdout)
		}
		t.Logf("kaudit fix --bootstrap: exit %d in %v", r.Code, r.Dur.Round(time.Millisecond))
		noSecret(t, r)
	})
	t.Run("fix --apply without an inventory, then its undo line", func(t *testing.T) {
		journal := filepath.Join(dir, "journal") // a path with no character the undo line quotes
		r := runKaudit(t, runOpts{}, append([]string{"fix", "--ssh-config", sshConfig, "--quiet", "--apply", "--yes", "--rules", "kafka-backlog-config", "--journal-dir", journal}, admin...)...)
		undo := ""
		for _, l := range strings.Split(r.Stdout, "\n") {
			if u, ok := strings.CutPrefix(l, "undo: "); ok {
				undo = u
			}
		}
		if r.Code != 0 || undo == "" {
			t.Fatalf("exit %d, no undo line\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
		t.Logf("%s", undo)
		backlog := func(h *testfleet.Host) string {
			return strings.TrimSpace(h.Exec(t, "grep", "^socket.listen.backlog.size=", h.KafkaConfig))
		}
		for _, h := range hosts {
			if b := backlog(h); b == "socket.listen.backlog.size=2048" {
				t.Errorf("%s: the apply left %s", h.Spec.Name, b)
			}
		}
		words := strings.Fields(undo)
		if strings.ContainsAny(undo, `'"`) || words[0] != "kaudit" || words[1] != "rollback" || !strings.Contains(undo, " --bootstrap "+bootstrap+" ") || !strings.Contains(undo, " --ssh-config "+sshConfig+" ") {
			t.Fatalf("undo line %q", undo)
		}
		target := words[2 : len(words)-2] // without rollback and --run RUN-ID
		run := words[len(words)-1]
		ls := runKaudit(t, runOpts{}, append([]string{"rollback", "--list"}, target...)...)
		for _, a := range addrs {
			if !listed(ls.Stdout, run, a) {
				t.Errorf("rollback --list --bootstrap: no line for run %s on %s (exit %d)\nstdout:\n%s\nstderr:\n%s", run, a, ls.Code, ls.Stdout, ls.Stderr)
			}
		}
		t.Logf("rollback --list: exit %d\n%s", ls.Code, ls.Stdout)
		rb := runKaudit(t, runOpts{}, append(words[1:], "--yes")...)
		if rb.Code != 0 {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", undo, rb.Code, rb.Stdout, rb.Stderr)
		}
		for i, a := range addrs {
			if !strings.Contains(rb.Stdout, a+": rolled back") {
				t.Errorf("the rollback does not name %s:\n%s", a, rb.Stdout)
			}
			if b := backlog(hosts[i]); b != "socket.listen.backlog.size=2048" {
				t.Errorf("%s after the rollback: %s", a, b)
			}
		}
		t.Logf("rollback: exit %d in %v\n%s", rb.Code, rb.Dur.Round(time.Millisecond), rb.Stdout)
		// The journal lost: the run rebuilt from the manifests left on the
		// brokers the cluster names. The rollback above undid it, so
		// rolling it back again restores nothing.
		fh := runKaudit(t, runOpts{}, append(words[1:], "--yes", "--from-hosts", "--journal-dir", t.TempDir())...)
		t.Logf("rollback --from-hosts: exit %d\n%s%s", fh.Code, fh.Stdout, fh.Stderr)
		if fh.Code != 0 || !strings.Contains(fh.Stdout, "journal of run "+run+" rebuilt from 3 host(s)") {
			t.Errorf("rollback --from-hosts --bootstrap after the rollback: exit %d\nstdout:\n%s\nstderr:\n%s", fh.Code, fh.Stdout, fh.Stderr)
		}
		for i, a := range addrs {
			if !strings.Contains(fh.Stdout, a+": rolled back (1 unchanged)") {
				t.Errorf("the second rollback changed %s or does not name it:\n%s", a, fh.Stdout)
			}
			if b := backlog(hosts[i]); b != "socket.listen.backlog.size=2048" {
				t.Errorf("%s after the second rollback: %s", a, b)
			}
		}
		noSecret(t, result{Stdout: r.Stdout + ls.Stdout + rb.Stdout + fh.Stdout, Stderr: r.Stderr + ls.Stderr + rb.Stderr + fh.Stderr})
	})
}

// listed reports whether rollback --list's output names run and has a
// line for host whose backups are on the host (the run column is on the
// run's first line only).
func listed(out, run, host string) bool {
	if !strings.Contains(out, run) {
		return false
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, host) && strings.HasSuffix(l, "backups") {
			return true
		}
	}
	return false
}

// brokerCerts makes a CA and a server certificate signed by it carrying
// every host's address (the name a client checks when it bootstraps
// from one of them).
func brokerCerts(t *testing.T, hosts []*testfleet.Host) (*x509.Certificate, *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaudit e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(t, err)
	ca, err := x509.ParseCertificate(caDER)
	must(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kafka.e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	for _, h := range hosts {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(h.Addr))
		tmpl.DNSNames = append(tmpl.DNSNames, h.Spec.Name)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	must(t, err)
	return ca, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
