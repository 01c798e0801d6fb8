package rules

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// TestBacklogUsesTheRunningBroker: when the cluster reported the running
// broker's socket.listen.backlog.size (scan --bootstrap, host proven by
// meta.properties), the rule judges that value and names the file's when
// they differ.
func TestBacklogUsesTheRunningBroker(t *testing.T) {
	for _, tt := range []struct {
		name     string
		run      facts.RunningConfig
		status   Status
		observed string
	}{
		{"the file is not the one the broker read", facts.RunningConfig{Value: "50", Source: "default"}, Fail,
			"the running broker uses 50 (default): the file is not the one this broker read"},
		{"a dynamic config lowers it", facts.RunningConfig{Value: "100", Source: "dynamic"}, Fail,
			"the running broker uses 100 (dynamic): a dynamic config overrides the file"},
		{"they agree", facts.RunningConfig{Value: "4096", Source: "static"}, Pass,
			"socket.listen.backlog.size=4096 on the running broker (static)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := compliantHost()
			f.Kafka.Running = map[string]facts.RunningConfig{PropBacklog: tt.run}
			fd := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBacklogConfig)
			if fd.Status != tt.status || !strings.Contains(fd.Observed, tt.observed) {
				t.Errorf("%s %q, want %s with %q", fd.Status, fd.Observed, tt.status, tt.observed)
			}
		})
	}
}
