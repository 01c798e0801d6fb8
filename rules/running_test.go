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

// TestBacklogNotAnIntegerBlamesTheRightValue: an unusable value is named
// where it is: the running broker's when the cluster reported one (the
// file's 4096 is fine), the file's at its line otherwise; as an excerpt,
// its secrets hidden.
func TestBacklogNotAnIntegerBlamesTheRightValue(t *testing.T) {
	for _, tt := range []struct {
		name   string
		file   string
		run    *facts.RunningConfig
		reason string
	}{
		{"the running value is bad", "4096", &facts.RunningConfig{Value: "abc", Source: "dynamic"},
			`socket.listen.backlog.size="abc" on the running broker is not an integer`},
		{"the file's value is bad", "abc", nil,
			`socket.listen.backlog.size="abc" (/opt/kafka/config/server.properties:`},
		{"the file's value carries a password's line", "8192ssl.truststore.password=[hidden]", nil,
			`socket.listen.backlog.size="8192ssl.truststore.password=[hidden]" (/opt/kafka/config/server.properties:`},
		{"a megabyte on the running broker", "4096", &facts.RunningConfig{Value: strings.Repeat("9", 1<<20) + "x", Source: "dynamic"},
			`…" (1048577 bytes) on the running broker is not an integer`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := compliantHost()
			f.Kafka.Properties[PropBacklog] = tt.file
			if tt.run != nil {
				f.Kafka.Running = map[string]facts.RunningConfig{PropBacklog: *tt.run}
			}
			fd := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBacklogConfig)
			if fd.Status != Unknown || !strings.Contains(fd.Reason, tt.reason) {
				t.Errorf("%s %q, want unknown with %q", fd.Status, fd.Reason, tt.reason)
			}
			if tt.run != nil && strings.Contains(fd.Reason, "4096") {
				t.Errorf("reason %q blames the file's value", fd.Reason)
			}
			if len(fd.Reason) > 300 {
				t.Errorf("reason of %d bytes: the value is not cut", len(fd.Reason))
			}
		})
	}
}

// TestReceiveBufferUsesTheRunningBroker: kafka-buffer-capped and
// kernel-synack-wscale's SO_RCVBUF reasoning judge the running broker's
// socket.receive.buffer.bytes when the cluster reported it, and name the
// file's value when it differs.
func TestReceiveBufferUsesTheRunningBroker(t *testing.T) {
	for _, tt := range []struct {
		name     string
		run      *facts.RunningConfig
		capped   Status
		observed string // in both rules' Observed
	}{
		{"the file's value, no cluster", nil, Pass, "socket.receive.buffer.bytes=102400 (set"},
		{"the broker read another file", &facts.RunningConfig{Value: "4194304", Source: "static"}, Fail,
			"the file says 102400 (/opt/kafka/config/server.properties:13), the running broker uses 4194304 (static): the file is not the one this broker read"},
		{"they agree", &facts.RunningConfig{Value: "102400", Source: "static"}, Pass, "socket.receive.buffer.bytes=102400 on the running broker (static)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := compliantHost()
			f.Sysctl["net.core.rmem_max"], f.Sysctl["net.core.wmem_max"] = "212992", "212992"
			if tt.run != nil {
				f.Kafka.Running = map[string]facts.RunningConfig{PropRcvbuf: *tt.run}
			}
			got := Evaluate(f, DefaultProfile())
			fd := find(t, got, RuleKafkaBufferCapped)
			if fd.Status != tt.capped || !strings.Contains(fd.Observed, tt.observed) {
				t.Errorf("%s: %s %q, want %s with %q", RuleKafkaBufferCapped, fd.Status, fd.Observed, tt.capped, tt.observed)
			}
			if fd := find(t, got, RuleKernelSynackWscale); !strings.Contains(fd.Observed, "(sets SO_RCVBUF)") || (tt.run != nil && !strings.Contains(fd.Observed, tt.observed)) {
				t.Errorf("%s: %q, want the SO_RCVBUF note with %q", RuleKernelSynackWscale, fd.Observed, tt.observed)
			}
		})
	}
	// -1 on the running broker: the listener sets no SO_RCVBUF, whatever
	// the file says.
	f := compliantHost()
	f.Kafka.Running = map[string]facts.RunningConfig{PropRcvbuf: {Value: "-1", Source: "static"}}
	if fd := find(t, Evaluate(f, DefaultProfile()), RuleKernelSynackWscale); !strings.Contains(fd.Observed, "socket.receive.buffer.bytes=-1 (SO_RCVBUF not set): the file says 102400 (/opt/kafka/config/server.properties:13), the running broker uses -1 (static)") {
		t.Errorf("running -1: %q", fd.Observed)
	}
}

// TestLongValuesAreExcerpted: a host's or a cluster's value of a megabyte
// is quoted as an excerpt with its size in the findings that name it,
// never whole.
func TestLongValuesAreExcerpted(t *testing.T) {
	mb := strings.Repeat("7", 1<<20)
	f := compliantHost()
	f.Sysctl["net.core.rmem_max"], f.Sysctl["net.core.wmem_max"] = "212992", "212992"
	f.Kafka.Properties[PropRcvbuf] = mb
	f.Kafka.Running = map[string]facts.RunningConfig{PropRcvbuf: {Value: "x" + mb, Source: "dynamic"}}
	total := 0
	for _, fd := range Evaluate(f, DefaultProfile()) {
		total += len(fd.Observed) + len(fd.Reason) + len(fd.Expected)
	}
	if total > 64<<10 {
		t.Errorf("the findings quote %d bytes of two 1 MB values", total)
	}
	fd := find(t, Evaluate(f, DefaultProfile()), RuleKafkaBufferCapped)
	if !strings.Contains(fd.Observed+fd.Reason, "(1048577 bytes)") {
		t.Errorf("kafka-buffer-capped does not name the value's size: %q %q", fd.Observed, fd.Reason)
	}
}
