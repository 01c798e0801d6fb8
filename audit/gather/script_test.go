package gather

import (
	"strings"
	"testing"
)

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
