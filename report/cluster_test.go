package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

func clusterFixture() *Cluster {
	return &Cluster{ID: "Xy3cluster", Bootstrap: "kafka-a1:9092", Controller: 1,
		Quorum: &ClusterQuorum{Leader: 3001, Voters: []QuorumVoter{{ID: 3000, Endpoints: []string{"CONTROLLER=ctl-0:9093"}}, {ID: 3001}}},
		Brokers: []ClusterBroker{
			{NodeID: 1, Advertised: "kafka-a1.internal:9092", Host: "kafka-a1", By: "name", Proof: "proven",
				Detail:       "meta.properties in /var/lib/kafka says cluster Xy3cluster node 1",
				Configs:      map[string]ClusterConfig{"socket.listen.backlog.size": {Value: "50", Source: "default"}},
				KafkaAtLeast: "3.8", KafkaEvidence: "Produce v11, first in 3.8"},
			{NodeID: 7, Advertised: "kafka-7.internal:9092", KafkaEvidence: "ApiVersions failed: i/o timeout"},
			{NodeID: 8, Advertised: "kafka-8.internal:9092", Host: "kafka-8", By: "name", Proof: facts.ProofLeftOut},
		},
		Problems: []ClusterProblem{
			{Rule: "broker-unaudited", Severity: "high", NodeID: 7, Message: "broker 7 (kafka-7.internal:9092) is in cluster Xy3cluster but in no inventory: nothing about it was checked"},
			{Rule: "broker-version-mismatch", Severity: "high", NodeID: 1, Host: "kafka-a1", Message: "broker 1 speaks Produce v11 (Kafka ≥ 3.8) but the jars on kafka-a1 say Apache Kafka 3.6.1 (/opt/kafka/libs/kafka_2.13-3.6.1.jar): kaudit judged another installation than the running one"},
			{Rule: "host-not-a-broker", Severity: "medium", NodeID: -1, Host: "evil", Message: "host \x1b[31m<b>evil</b> is in the broker group but runs no Kafka broker"},
			{Rule: "advertised-shared", Severity: "medium", NodeID: -1, Message: "all 2 brokers of cluster Xy3cluster advertise the host nlb.internal",
				Waived: "by w.yaml:4, no expiry: behind the NLB by design"},
		}}
}

// TestClusterInEveryFormat: the verified mapping, a running setting with
// its source and the cluster findings come out in every report format,
// hostile text made harmless.
func TestClusterInEveryFormat(t *testing.T) {
	r := loadFixture(t)
	r.Cluster = clusterFixture()
	want := map[string][]string{
		"json": {`"waived": "by w.yaml:4, no expiry: behind the NLB by design"`, `"broker-unaudited"`, `"proof": "proven"`, `"source": "default"`, `"kafka_at_least": "3.8"`, `"kafka_evidence": "Produce v11, first in 3.8"`,
			`"kafka_evidence": "ApiVersions failed: i/o timeout"`, `"controller_quorum": {`, `"leader": 3001`},
		"table": {"controller quorum: leader 3001; voters 3000 (CONTROLLER=ctl-0:9093), 3001", "broker 1 kafka-a1.internal:9092 → kafka-a1 (by name, proven); Kafka ≥ 3.8 (Produce v11, first in 3.8)", "socket.listen.backlog.size=50 (default)", "high broker-unaudited: broker 7 (kafka-7.internal:9092) is in cluster Xy3cluster but in no inventory",
			"broker 7 kafka-7.internal:9092 → no audited host; Kafka version not proven: ApiVersions failed: i/o timeout",
			"broker 8 kafka-8.internal:9092 → kafka-8 (by name; left out of this run by --limit: not audited)", "high broker-version-mismatch: broker 1 speaks Produce v11 (Kafka ≥ 3.8) but the jars on kafka-a1 say Apache Kafka 3.6.1",
			"waived (was medium) advertised-shared: all 2 brokers of cluster Xy3cluster advertise the host nlb.internal; waived by w.yaml:4, no expiry: behind the NLB by design"},
		"markdown": {"## Cluster", "controller quorum: leader 3001; voters 3000 (CONTROLLER=ctl-0:9093), 3001", "| 1 | kafka-a1.internal:9092 | kafka-a1 | proven (by name)", "| Kafka ≥ 3.8 (Produce v11, first in 3.8) |", "socket.listen.backlog.size=50 (default)", "- **high** `broker-unaudited`: broker 7",
			"- **high** `broker-version-mismatch`: broker 1 speaks Produce v11", "- **waived (was medium)** `advertised-shared`: all 2 brokers of cluster Xy3cluster advertise the host nlb.internal; waived by w.yaml:4, no expiry: behind the NLB by design"},
		"html": {`<section id="cluster">`, "<p>controller quorum: leader 3001; voters 3000 (CONTROLLER=ctl-0:9093), 3001</p>", "<td>kafka-a1</td>", "<td>Kafka ≥ 3.8 (Produce v11, first in 3.8)</td>", "socket.listen.backlog.size=50 (default)", "<code>broker-unaudited</code>: broker 7",
			"<code>broker-version-mismatch</code>: broker 1 speaks", `<span class="status-waived">waived (was medium)</span> <code>advertised-shared</code>: all 2 brokers of cluster Xy3cluster advertise the host nlb.internal <em>waived by w.yaml:4, no expiry: behind the NLB by design</em>`},
		"junit": {`name="controller_quorum" value="controller quorum: leader 3001; voters 3000 (CONTROLLER=ctl-0:9093), 3001"`, `name="broker-unaudited"`, `type="high"`, "kafka-a1 (by name, proven)", "Kafka ≥ 3.8 (Produce v11, first in 3.8)", `name="broker-version-mismatch"`,
			`<skipped message="waived by w.yaml:4, no expiry: behind the NLB by design (all 2 brokers of cluster Xy3cluster advertise the host nlb.internal)"`},
		"prometheus": {`kaudit_cluster_broker{cluster="Xy3cluster",node_id="1",advertised="kafka-a1.internal:9092",host="kafka-a1",proof="proven",kafka_at_least="3.8"} 1`,
			`kaudit_cluster_broker{cluster="Xy3cluster",node_id="7",advertised="kafka-7.internal:9092",host="",proof="",kafka_at_least=""} 1`,
			`kaudit_cluster_problems{cluster="Xy3cluster",rule="broker-unaudited",severity="high"} 1`, `kaudit_cluster_problems{cluster="Xy3cluster",rule="broker-version-mismatch",severity="high"} 1`,
			`kaudit_cluster_problems_waived{cluster="Xy3cluster",rule="advertised-shared",severity="medium"} 1`},
	}
	for _, f := range Formats() {
		ws, ok := want[f]
		if !ok {
			t.Errorf("format %s: no expectation for the cluster section", f)
			continue
		}
		var b bytes.Buffer
		if err := Render(&b, f, r, Options{Width: 400}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := b.String()
		for _, w := range ws {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", f, w, tail(out))
			}
		}
		if strings.Contains(out, "\x1b[31m") || (f != "table" && strings.Contains(out, "<b>evil")) {
			t.Errorf("%s: hostile text passed through", f)
		}
	}
	var back Report
	var b bytes.Buffer
	if err := Render(&b, "json", r, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Cluster == nil || back.Cluster.Brokers[0].Configs["socket.listen.backlog.size"].Source != "default" {
		t.Errorf("cluster does not round-trip through JSON: %v %+v", err, back.Cluster)
	}
}

func tail(s string) string {
	if i := strings.Index(s, "luster"); i > 200 {
		return s[i-200:]
	}
	return s
}
