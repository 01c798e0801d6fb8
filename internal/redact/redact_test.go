package redact

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"ssl.key.password", true},
		{"ssl.keystore.password", true},
		{"ssl.truststore.password", true},
		{"ssl.keystore.key", true},
		{"ssl.keystore.certificate.chain", true},
		{"ssl.truststore.certificates", true},
		{"sasl.jaas.config", true},
		{"listener.name.sasl_ssl.plain.sasl.jaas.config", true},
		{"listener.name.internal.ssl.keystore.password", true},
		{"sasl.oauthbearer.client.credentials.client.secret", true},
		{"sasl.oauthbearer.assertion.private.key.passphrase", true},
		{"password.encoder.secret", true},
		{"password.encoder.old.secret", true},
		{"delegation.token.secret.key", true},
		{"delegation.token.master.key", true},
		{"javax.net.ssl.keyStorePassword", true},
		{"ldap.java.naming.security.credentials", true},
		{"basic.auth.user.info", true},
		{"password", true},
		{"PASSWORD", true},
		{"socket.listen.backlog.size", false},
		{"listeners", false},
		{"log.dirs", false},
		{"num.network.threads", false},
		{"socket.receive.buffer.bytes", false},
		{"ssl.keystore.location", false},
		{"password.encoder.iterations", false},
		{"delegation.token.expiry.time.ms", false},
		{"sasl.enabled.mechanisms", false},
	} {
		if got := Key(tt.key); got != tt.want {
			t.Errorf("Key(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, tt := range []struct{ key, v, want string }{
		{"ssl.truststore.password", "S3cr3t", Hidden},
		{"sasl.jaas.config", `x required username="a" password="S3cr3t";`, Hidden},
		{"socket.listen.backlog.size", "8192", "8192"},
		// A continuation joined the next line (Java reads it so).
		{"socket.listen.backlog.size", "8192ssl.truststore.password=S3cr3t", "8192ssl.truststore.password=" + Hidden},
		{"socket.listen.backlog.size", "8192ssl.truststore.password = S3cr3t", "8192ssl.truststore.password =" + Hidden},
		{"log.dirs", "/data/kafkassl.keystore.password:S3cr3t", "/data/kafkassl.keystore.password:" + Hidden},
		{"log.dirs", `/dsasl.jaas.config=x required password="S3cr3t";`, "/dsasl.jaas.config=" + Hidden},
		{"listeners", `PLAINTEXT://h:9092 password="S3cr3t"`, `PLAINTEXT://h:9092 password=` + Hidden},
		{"listeners", "SASL_SSL://secret.example.com:9093,PLAINTEXT://:9092", "SASL_SSL://secret.example.com:9093,PLAINTEXT://:9092"},
		{"log.dirs", "/data/secret-logs,/data/b", "/data/secret-logs,/data/b"},
	} {
		if got := Value(tt.key, tt.v); got != tt.want {
			t.Errorf("Value(%q, %q) = %q, want %q", tt.key, tt.v, got, tt.want)
		}
		if strings.Contains(Value(tt.key, tt.v), "S3cr3t") {
			t.Errorf("Value(%q, %q) shows the secret", tt.key, tt.v)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	for _, tt := range []struct{ v, want string }{
		{"abc", `"abc"`},
		{"8192ssl.truststore.password=S3cr3t", `"8192ssl.truststore.password=[hidden]"`},
		{long, `"` + strings.Repeat("a", ExcerptRunes) + `…" (1048576 bytes)`},
		{strings.Repeat("é", 50), `"` + strings.Repeat("é", ExcerptRunes) + `…" (100 bytes)`},
		{"a\x1b[2Jb", `"a\x1b[2Jb"`},
	} {
		if got := Excerpt(tt.v); got != tt.want {
			t.Errorf("Excerpt(%.50q) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
