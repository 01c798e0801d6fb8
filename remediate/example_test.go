package remediate_test

import (
	"os"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
)

// A Kafka 3.5 broker whose listener runs with the default backlog of 50.
func Example() {
	f := &facts.Facts{
		KafkaPort: 9092,
		Sysctl:    map[string]string{"net.core.somaxconn": "4096"},
		Listeners: []facts.Listener{{Port: 9092, Backlog: 50}},
		Kafka: &facts.Kafka{Version: "3.5.1", Distribution: "apache",
			Config: "/opt/kafka/config/server.properties", Properties: map[string]string{}},
	}
	findings := []rules.Finding{{
		Rule: "kafka-backlog-config", Status: rules.Fail,
		Fix: &rules.Fix{KafkaProperties: map[string]string{"socket.listen.backlog.size": "4096"}, Restart: true},
	}}
	plan := remediate.PlanHost("broker-1", f, findings, remediate.Selector{})
	remediate.RenderPlan(os.Stdout, []remediate.HostPlan{plan}, remediate.PlanOptions{})
	// Output:
	// broker-1:
	//   kafka-backlog-config: socket.listen.backlog.size (unset) → 4096 (persist only) [restart required]
	//       in /opt/kafka/config/server.properties
	//       read by the broker at start: restart the broker when convenient, one broker of a cluster at a time once the cluster is healthy, or let kaudit do it: fix --apply --restart --bootstrap
	//
	// 1 change on 1 host, 1 needs a broker restart; nothing changed (run with --apply)
}
