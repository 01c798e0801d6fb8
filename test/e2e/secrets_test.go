//go:build e2e

package e2e

import (
	"bufio"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/testfleet"
)

const (
	passphrase = "pp-S3cr3t-PASSPHRASE-7f3a"
	canary1    = "S3cr3t-CANARY"  // ssl.keystore.password in server.properties
	canary2    = "S3cr3t-CANARY2" // sasl.jaas.config password="..."
	canary3    = "S3cr3t-CANARY3" // -Djavax.net.ssl.keyStorePassword on the command line
	canary4    = "S3cr3t-CANARY4" // --override ssl.key.password after the config
	canary5    = "S3cr3t-CANARY5" // listener-scoped jaas config
	canary6    = "S3cr3t-CANARY6" // joined to the backlog's line by a continuation
)

// secretBroker is a 3.6.1 broker whose config and command line carry secrets.
func secretBroker() *testfleet.BrokerSpec {
	const home = "/opt/kafka_2.13-3.6.1"
	return &testfleet.BrokerSpec{
		Version: "3.6.1",
		Properties: map[string]string{
			"socket.listen.backlog.size":                    "4096",
			"num.network.threads":                           "8\\\nssl.truststore.password=" + canary6, // one logical line, as Java reads it
			"listeners":                                     "SASL_SSL://:9092",
			"ssl.keystore.location":                         "/etc/kafka/secrets/kafka.keystore.jks",
			"ssl.keystore.password":                         canary1,
			"ssl.truststore.password":                       canary1 + "-trust",
			"sasl.enabled.mechanisms":                       "PLAIN",
			"sasl.jaas.config":                              `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="` + canary2 + `";`,
			"listener.name.sasl_ssl.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="` + canary5 + `" user_admin="` + canary5 + `";`,
		},
		Argv: []string{
			testfleet.FakeJavaPath, "-Xmx1G", "-Xms1G", "-server",
			"-Djavax.net.ssl.keyStorePassword=" + canary3,
			"-Djavax.net.ssl.trustStorePassword=" + canary3,
			"-Dkafka.logs.dir=" + home + "/bin/../logs",
			"-cp", home + "/bin/../libs/kafka-clients-3.6.1.jar:" + home + "/bin/../libs/kafka_2.13-3.6.1.jar",
			"kafka.Kafka", home + "/config/server.properties",
			"--override", "ssl.key.password=" + canary4,
		},
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	requireEnv(t)
	for _, tool := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	kauditBin(t)
	f := testfleet.Start(t, []testfleet.HostSpec{{
		Name:    "secrets",
		Sysctls: map[string]string{"net.core.somaxconn": "4096"},
		Kafka:   secretBroker(),
	}})
	h := f.Host("secrets")

	// A passphrase-protected key, authorized on the fleet, usable only
	// through the agent.
	key := newKey(t, passphrase)
	pub := readFileBytes(t, key+".pub")
	af, err := os.OpenFile(f.AuthorizedKeys(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = af.Write(pub)
	af.Close()
	sock := startAgent(t)
	addToAgent(t, sock, key)

	// The material that must never appear: the passphrase, the canaries,
	// the private key (encrypted file body, decrypted seed in several
	// encodings) and the fleet's own unencrypted key.
	secrets := map[string]string{"passphrase": passphrase}
	for i, c := range []string{canary1, canary2, canary3, canary4, canary5, canary6} {
		secrets[fmt.Sprintf("canary %d", i+1)] = c
	}
	addKeySecrets(t, secrets, "agent key", key, passphrase)
	addKeySecrets(t, secrets, "fleet key", f.IdentityFile, "")

	inv := writeRawInventory(t, f, "secrets", h, []string{
		"use_agent: true",
		"identity_files: [" + quoteYAML(key) + "]",
	})
	env := runOpts{env: []string{"SSH_AUTH_SOCK=" + sock}}

	// Sanity: the secrets are really on the host, where kaudit could read them.
	if out := h.Exec(t, "cat", h.KafkaConfig); !strings.Contains(out, canary1) || !strings.Contains(out, canary2) {
		t.Fatalf("server.properties lacks the canaries:\n%s", out)
	}
	if out := h.Exec(t, "sh", "-c", "tr '\\0' ' ' < /proc/$(pgrep -f 'kafka[.]Kafka')/cmdline"); !strings.Contains(out, canary3) || !strings.Contains(out, canary4) {
		t.Fatalf("broker command line lacks the canaries: %s", out)
	}

	type output struct{ name, text string }
	var outputs []output
	add := func(name string, r result, files ...string) {
		outputs = append(outputs, output{name + " stdout", r.Stdout}, output{name + " stderr", r.Stderr})
		for _, p := range files {
			outputs = append(outputs, output{name + " " + filepath.Base(p), string(readFileBytes(t, p))})
		}
	}

	// JSON to a file: audited through the agent.
	r := scan(t, env, inv, "--connect-timeout", "5s", "--timeout", "20s")
	rh := r.host(t, "secrets")
	assertComplete(t, rh)
	if rh.Facts != nil && rh.Facts.Kafka != nil {
		k := rh.Facts.Kafka
		for key := range k.Properties {
			if !slices.Contains(gather.KafkaKeys, key) && !slices.Contains(rules.PropertyKeys(), key) {
				t.Errorf("server.properties key %q left the host: only gather.KafkaKeys and the catalog's checks' keys may", key)
			}
		}
		if k.Properties["socket.listen.backlog.size"] != "4096" || k.Properties["listeners"] != "SASL_SSL://:9092" ||
			k.Properties["num.network.threads"] != "8ssl.truststore.password=[hidden]" {
			t.Errorf("kafka properties %v: want the file's backlog and listeners, and the network threads' continued line with its password hidden", k.Properties)
		}
	} else {
		t.Errorf("kafka not found: %+v", rh.Facts)
	}
	outputs = append(outputs, output{"scan json stdout", r.Stdout}, output{"scan json stderr", r.Stderr}, output{"scan out.json", string(r.JSON)})

	// Every format on stdout and to a file, and the fix plan.
	dir := t.TempDir()
	for _, format := range report.Formats() {
		out := filepath.Join(dir, "report."+format)
		add("scan -f "+format+" -o", runKaudit(t, env, "scan", inv, "--format", format, "-o", out, "--fail-on", "critical"), out)
		add("scan -f "+format, runKaudit(t, env, "scan", inv, "--format", format, "--fail-on", "critical"))
	}
	add("scan -v", runKaudit(t, env, "scan", inv, "-v", "--fail-on", "critical"))
	add("fix", runKaudit(t, env, "fix", inv))
	add("explain", runKaudit(t, env, "explain", "kernel-synack-wscale"))

	total := 0
	for _, o := range outputs {
		total += len(o.text)
		for what, s := range secrets {
			if s != "" && strings.Contains(o.text, s) {
				t.Errorf("%s contains %s (%q)", o.name, what, s)
			}
		}
		// Partial leaks of the canaries (e.g. a value cut short).
		if strings.Contains(o.text, "S3cr3t") || strings.Contains(o.text, "PASSPHRASE") {
			t.Errorf("%s contains a fragment of a secret", o.name)
		}
	}
	if total < 10000 {
		t.Errorf("only %d bytes of output checked", total)
	}
	t.Logf("checked %d outputs (%d bytes) for %d secrets: none found", len(outputs), total, len(secrets))
	if !t.Failed() {
		observeNote(400, "secrets: passphrase-protected key used through ssh-agent; passwords in server.properties (ssl.*, sasl.jaas.config), "+
			"in -D JVM options and in --override on the broker command line", "— (audited)",
			fmt.Sprintf("audited; none of %d secrets (passphrase, 5 canaries, private-key lines and seed encodings) in any of %d outputs "+
				"(stdout, stderr, report files of every format, fix plan)", len(secrets), len(outputs)), 0)
	}
}

// startAgent runs ssh-agent in the foreground (-D) on a private socket and
// kills it (by its PID) when the test ends.
func startAgent(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, 5*time.Second, "ssh-agent socket", func() bool { _, err := os.Stat(sock); return err == nil })
	return sock
}

// addToAgent loads key into the agent, typing the passphrase via SSH_ASKPASS.
func addToAgent(t *testing.T, sock, key string) {
	t.Helper()
	askpass := filepath.Join(t.TempDir(), "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho '"+passphrase+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-add", key)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SSH_AUTH_SOCK=" + sock, "SSH_ASKPASS=" + askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=:0"}
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v: %s", err, out)
	}
	out, err := exec.Command("env", "SSH_AUTH_SOCK="+sock, "ssh-add", "-l").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kaudit-e2e") {
		t.Fatalf("ssh-add -l: %v: %s", err, out)
	}
}

// addKeySecrets adds the private key's material: each base64 line of the
// file, and the decrypted ed25519 seed/key in hex, base64 and raw base64.
func addKeySecrets(t *testing.T, secrets map[string]string, name, path, pass string) {
	t.Helper()
	b := readFileBytes(t, path)
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	i := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "-----") || len(line) < 20 {
			continue
		}
		i++
		secrets[fmt.Sprintf("%s file line %d", name, i)] = line
	}
	var raw any
	var err error
	if pass != "" {
		raw, err = ssh.ParseRawPrivateKeyWithPassphrase(b, []byte(pass))
	} else {
		raw, err = ssh.ParseRawPrivateKey(b)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var priv ed25519.PrivateKey
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		priv = *k
	case ed25519.PrivateKey:
		priv = k
	default:
		t.Fatalf("%s: unexpected key type %T", name, raw)
	}
	seed := priv.Seed()
	for enc, v := range map[string]string{
		"seed hex": hex.EncodeToString(seed), "seed b64": base64.StdEncoding.EncodeToString(seed),
		"seed rawb64": base64.RawStdEncoding.EncodeToString(seed), "key b64": base64.StdEncoding.EncodeToString(priv),
		"seed b64url": base64.RawURLEncoding.EncodeToString(seed),
	} {
		secrets[name+" "+enc] = v
	}
}
