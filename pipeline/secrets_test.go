package pipeline_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// secretHost is a 3.6.1 broker whose server.properties has
// "socket.listen.backlog.size=8192\" followed by
// "ssl.truststore.password=…": Java joins the two lines, so the gather
// sends the backlog's logical line with the password in its value (as
// kafkaconf.awk does, TestKafkaConfAwk), and --override carries a
// JAAS-like value into a key kaudit reads.
func secretHost() *simhost.Host {
	h := simhost.DemoFleet()[2] // kafka-bookworm-03: compliant, Kafka 3.6.1
	h.Name = "secret-host"
	k := *h.Kafka
	k.ConfigBody = "20:socket.listen.backlog.size=8192ssl.truststore.password=S3cr3t-CONTINUED\n" +
		"23:log.dirs=/data/kafka\n" +
		"26:listeners=PLAINTEXT://:9092 password=\"S3cr3t-LISTENER\"\n"
	k.Overrides = []string{`socket.send.buffer.bytes=1x sasl.jaas.config=x required password="S3cr3t-OVERRIDE";`}
	h.Kafka = &k
	return h
}

// TestNoSecretInAnyFormat renders the scan of a host whose values carry
// passwords in every registered format (report.Formats: a new format is
// checked without a word here), plain and verbose, and the fix plans:
// no fragment of a password appears.
func TestNoSecretInAnyFormat(t *testing.T) {
	f := startFleet(t, []*simhost.Host{secretHost()})
	r, err := pipeline.Audit(context.Background(), f.Hosts, pipeline.Config{Concurrency: 1, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second, Profile: rules.DefaultProfile()})
	if err != nil {
		t.Fatal(err)
	}
	if fd := finding(t, r, "secret-host", rules.RuleKafkaBacklogConfig); fd.Status != rules.Unknown || !strings.Contains(fd.Reason, `"8192ssl.truststore.password=[hidden]"`) {
		t.Errorf("backlog finding %s %q: want unknown, naming the value with the password hidden", fd.Status, fd.Reason)
	}
	outputs := map[string]string{}
	for _, format := range report.Formats() {
		for _, verbose := range []bool{false, true} {
			var b bytes.Buffer
			if err := report.Render(&b, format, r, report.Options{Verbose: verbose, Width: 120}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			name := format
			if verbose {
				name += " -v"
			}
			outputs[name] = b.String()
		}
	}
	var plan, fix bytes.Buffer
	pipeline.WritePlan(&plan, r, remediate.Selector{}, nil, 0)
	pipeline.WriteFixPlan(&fix, pipeline.PlanFix(r, f.Hosts, remediate.Selector{}, nil), 0)
	outputs["plan"], outputs["fix plan"] = plan.String(), fix.String()
	if !strings.Contains(outputs["json"], "[hidden]") {
		t.Errorf("the JSON report does not show where a value was hidden")
	}
	for name, out := range outputs {
		if strings.Contains(out, "S3cr3t") {
			i := strings.Index(out, "S3cr3t")
			t.Errorf("%s shows a password: …%s…", name, out[max(0, i-60):min(len(out), i+30)])
		}
	}
}
