package remediate

import (
	"testing"

	"github.com/kaudit/kaudit/rules"
)

// TestPlanKIP764Boundaries evaluates the real rules on a broker at every
// boundary of Confluent's KIP-764 backports (confluentinc/kafka tags v6.1.11, v6.2.10, v7.0.9, v7.1.7) and of Apache Kafka
// 3.2, and plans their fixes: where the broker honours
// socket.listen.backlog.size the plan edits server.properties, elsewhere
// it tells the owner to upgrade and never writes the property.
func TestPlanKIP764Boundaries(t *testing.T) {
	for _, c := range []struct {
		v, dist      string
		configurable bool
		upgrade      string // manual text when not configurable
	}{
		{"6.1.10", "confluent", false, "upgrade Confluent Platform to 6.1.11 or a later patch"},
		{"6.1.11", "confluent", true, ""},
		{"6.2.9", "confluent", false, "upgrade Confluent Platform to 6.2.10 or a later patch"},
		{"6.2.10", "confluent", true, ""},
		{"7.0.8", "confluent", false, "upgrade Confluent Platform to 7.0.9 or a later patch"},
		{"7.0.9", "confluent", true, ""},
		{"7.1.6", "confluent", false, "upgrade Confluent Platform to 7.1.7 or a later patch"},
		{"7.1.7", "confluent", true, ""},
		{"7.2.0", "confluent", true, ""},
		{"3.1.2", "apache", false, "upgrade Kafka to ≥ 3.2"},
		{"3.2.0", "apache", true, ""},
	} {
		t.Run(c.dist+" "+c.v, func(t *testing.T) {
			f := hostFacts()
			f.Kafka.Version, f.Kafka.Distribution = c.v, c.dist
			f.Sysctl[keySomaxconn] = "4096"
			findings := rules.Evaluate(f, rules.DefaultProfile())
			p := PlanHost("broker-1", f, findings, Selector{})
			ch := find(p, KindKafkaProperty, propBacklog)
			if !c.configurable {
				if ch != nil || !hasText(manualTexts(p), c.upgrade) {
					t.Fatalf("change %+v, manual %q; want no property edit and %q", ch, manualTexts(p), c.upgrade)
				}
				return
			}
			if ch == nil || ch.To != "4096" || ch.PersistPath != serverProps {
				t.Fatalf("change %+v, want %s=4096 in %s; manual %q", ch, propBacklog, serverProps, manualTexts(p))
			}
		})
	}
}
