package discover

import (
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandConfigConnects(t *testing.T) {
	k := scramCluster(t)
	ca, srv := testCerts(t)
	tk := newCluster(t, kfake.NumBrokers(1), kfake.TLS(srv))
	caPEM := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})))
	for _, tt := range []struct {
		name, props, server string
		bootstrap           []string
	}{
		{"SASL_PLAINTEXT SCRAM-SHA-512", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n  username=\"admin\" password=\"admin-secret\";\n", "", k.ListenAddrs()},
		{"SSL with a PEM truststore", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=" + caPEM + "\n", "kafka.test", tk.ListenAddrs()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ReadCommandConfig(writeFile(t, "client.properties", tt.props))
			if err != nil {
				t.Fatal(err)
			}
			c.ServerName = tt.server
			o, err := c.Options(tt.bootstrap)
			if err != nil {
				t.Fatal(err)
			}
			o.Timeout = 10 * time.Second
			cl, err := Discover(context.Background(), o)
			if err != nil || len(cl.Brokers) == 0 {
				t.Fatalf("%v %+v", err, cl)
			}
		})
	}
}

func TestCommandConfigRefuses(t *testing.T) {
	for _, tt := range []struct{ name, props, want string }{
		{"JKS truststore", "security.protocol=SSL\nssl.truststore.location=/etc/kafka/client.truststore.jks\nssl.truststore.password=changeit\n",
			"keytool -importkeystore -srckeystore /etc/kafka/client.truststore.jks -srcstoretype JKS -destkeystore /etc/kafka/client.truststore.p12 -deststoretype PKCS12\n  openssl pkcs12 -in /etc/kafka/client.truststore.p12 -nokeys -out /etc/kafka/client.truststore.pem"},
		{"PKCS12 keystore", "security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/etc/kafka/client.p12\n",
			"openssl pkcs12 -in /etc/kafka/client.p12 -nodes -out /etc/kafka/client.pem"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadCommandConfig(writeFile(t, "client.properties", tt.props))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestPasswordNeverFromArgs(t *testing.T) {
	c := ClientConfig{Protocol: "SASL_PLAINTEXT", Mechanism: "SCRAM-SHA-256", User: "u"}
	if _, err := c.Options([]string{"h:9092"}); err == nil || !strings.Contains(err.Error(), "--sasl-password-file") {
		t.Errorf("no password source: %v", err)
	}
	t.Setenv("KAUDIT_TEST_PW", "pw")
	c.PasswordEnv = "KAUDIT_TEST_PW"
	if o, err := c.Options([]string{"h:9092"}); err != nil || o.SASL == nil || o.SASL.Name() != "SCRAM-SHA-256" {
		t.Errorf("env password: %v %+v", err, o)
	}
	c.Mechanism = "GSSAPI"
	if _, err := c.Options([]string{"h:9092"}); err == nil {
		t.Error("GSSAPI accepted")
	}
}

// TestPasswordNeverEchoed: a password given where a name or a path
// belongs (--sasl-password-env, a --sasl-password-file that does not
// exist, user:pass@ in --bootstrap) is refused without being repeated.
func TestPasswordNeverEchoed(t *testing.T) {
	const pw = "hunter2-S3cr3t"
	sasl := ClientConfig{Protocol: "SASL_SSL", Mechanism: "PLAIN", User: "u"}
	for _, tt := range []struct {
		name      string
		c         ClientConfig
		bootstrap string
		want      string
	}{
		{"a password for a variable name", func() ClientConfig { c := sasl; c.PasswordEnv = pw + "!"; return c }(), "h:9092", "--sasl-password-env takes the NAME"},
		{"a password that could be a name", func() ClientConfig { c := sasl; c.PasswordEnv = "hunter2_S3cr3t"; return c }(), "h:9092", "is not set"},
		{"a password for a file", func() ClientConfig { c := sasl; c.PasswordFile = pw; return c }(), "h:9092", "does not exist"},
		{"user:pass@ in the bootstrap", ClientConfig{}, "admin:" + pw + "@kafka-1:9092", "holds an '@'"},
		{"user:pass@ in the second server", ClientConfig{}, "kafka-0:9092,admin:" + pw + "@kafka-1:9092", "bootstrap server 2 of 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.Options(strings.Split(tt.bootstrap, ","))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "S3cr3t") {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
	if _, err := Discover(context.Background(), Options{Bootstrap: []string{"u:" + pw + "@h:9092"}}); err == nil || strings.Contains(err.Error(), "S3cr3t") {
		t.Errorf("Discover: %v", err)
	}
}

// TestCommandConfigContinuationNeverEchoed: a continuation that joins a
// password's line to a value the errors name (security.protocol, a store
// location) does not bring the password into the error.
func TestCommandConfigContinuationNeverEchoed(t *testing.T) {
	for _, props := range []string{
		"security.protocol=SASL_SSL\\\nssl.key.password=S3cr3t\n",
		"sasl.mechanism=SCRAM\\\n  ssl.truststore.password=S3cr3t\nsecurity.protocol=SASL_PLAINTEXT\nsasl.jaas.config=x required username=\"u\" password=\"p\";\n",
		"ssl.truststore.location=/etc/kafka/ca.jks\\\nssl.truststore.password=S3cr3t\nsecurity.protocol=SSL\n",
	} {
		c, err := ReadCommandConfig(writeFile(t, "client.properties", props))
		if err == nil {
			_, err = c.Options([]string{"h:9092"})
		}
		if err == nil || strings.Contains(err.Error(), "S3cr3t") {
			t.Errorf("%q: error %v", props, err)
		}
	}
}
