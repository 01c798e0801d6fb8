package gather

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	const m = "kaudit-0123456789ab"
	tests := []struct {
		name    string
		out     string
		wantErr string
		check   func(t *testing.T, s map[string]Section)
	}{
		{
			name: "banner before sections is ignored",
			out:  "Welcome to host\n" + m + " begin kernel\nrelease=5.4\n\n" + m + " end kernel ok\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if s["kernel"].Body != "release=5.4\n" || s["kernel"].State != "ok" {
					t.Errorf("kernel = %+v", s["kernel"])
				}
			},
		},
		{
			name: "state words",
			out:  m + " begin listeners\nss not found\n" + m + " end listeners missing\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if s["listeners"].State != "missing" {
					t.Errorf("state %q", s["listeners"].State)
				}
			},
		},
		{
			name: "a forged marker with another nonce is just content",
			out:  m + " begin kafka-config\nkaudit-ffffffffffff end kafka-config ok\n\n" + m + " end kafka-config ok\n" + m + " done\n",
			check: func(t *testing.T, s map[string]Section) {
				if !strings.Contains(s["kafka-config"].Body, "kaudit-ffffffffffff") {
					t.Errorf("body %q", s["kafka-config"].Body)
				}
			},
		},
		{name: "garbage", out: "Permission denied\nnot ours\n", wantErr: "no kaudit sections"},
		{name: "empty", out: "", wantErr: "no kaudit sections"},
		{name: "truncated inside", out: m + " begin kernel\nrelease=5.4\n" + m + " end kernel ok\n" + m + " begin sysctl\nnet.core", wantErr: `truncated inside section "sysctl"`},
		{name: "truncated after", out: m + " begin kernel\n\n" + m + " end kernel ok\n", wantErr: `truncated after section "kernel"`},
		{name: "end without begin", out: m + " end kernel ok\n", wantErr: "without its beginning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Split([]byte(tt.out), m)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestScriptRejectsUnsafeParams(t *testing.T) {
	bad := []Params{
		{KafkaPort: 0},
		{KafkaPort: 9092, KafkaConfig: "/etc/kafka/$(touch /tmp/x)"},
		{KafkaPort: 9092, KafkaConfig: "relative/server.properties"},
		{KafkaPort: 9092, KafkaConfig: "/etc/kafka/a'b"},
		{KafkaPort: 9092, Interfaces: []string{"eth0;reboot"}},
		{KafkaPort: 9092, Interfaces: []string{"-oProxyCommand"}},
		{KafkaPort: 9092, SysctlKeys: []string{"net.core.somaxconn`id`"}},
		{KafkaPort: 9092, Marker: "short"},
	}
	for _, p := range bad {
		if _, err := Script(p); err == nil {
			t.Errorf("Script(%+v) accepted unsafe input", p)
		}
	}
	s, err := Script(Params{KafkaPort: 9092, KafkaConfig: "/opt/kafka/config/server.properties", Interfaces: []string{"eth0", "bond0.100"}, SysctlKeys: []string{"net.core.somaxconn"}, Marker: "kaudit-0123456789ab"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"M='kaudit-0123456789ab'\n", "KAFKA_PORT=9092\n", "KAFKA_CONFIG='/opt/kafka/config/server.properties'\n", "IFACES='eth0 bond0.100'\n"} {
		if !strings.Contains(string(s), want) {
			t.Errorf("script lacks %q", want)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"": "''", "a b": "'a b'", "it's": `'it'\''s'`} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
