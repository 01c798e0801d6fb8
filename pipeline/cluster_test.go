package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Every cluster rule of the catalog is a kind discover.Map reports, or
// the version cross-check clusterOf adds, and each kind has its catalog
// entry (its severity lives there).
func TestClusterRulesAreMapKinds(t *testing.T) {
	kinds := map[string]bool{string(discover.BrokerUnaudited): true, string(discover.HostNotABroker): true,
		string(discover.MetaContradicts): true, string(discover.AdvertisedShared): true, string(discover.PortUnbound): true, string(discover.NodeIDShared): true,
		rules.RuleBrokerVersionMismatch: true}
	cat := rules.ClusterCatalog()
	if len(cat) != len(kinds) {
		t.Errorf("%d cluster rules in the catalog, %d kinds", len(cat), len(kinds))
	}
	for _, r := range cat {
		if !kinds[r.ID] {
			t.Errorf("cluster rule %s is no kind of discover.Map", r.ID)
		}
	}
}

func metaHost(name, cluster string, id int) report.Host {
	return report.Host{Name: name, Facts: &facts.Facts{Kafka: &facts.Kafka{LogDirs: []facts.LogDir{
		{Path: "/var/lib/kafka", Meta: &facts.MetaProperties{Version: "1", ClusterID: cluster, NodeID: id, BrokerID: -1}}}}}}
}

// askKfake starts a kfake cluster Xy3cluster of three brokers with opts
// and asks it, as scan --bootstrap does.
func askKfake(t *testing.T, opts ...kfake.Opt) (*ClusterSource, *discover.Cluster) {
	t.Helper()
	k, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3), kfake.ClusterID("Xy3cluster")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	src := &ClusterSource{Bootstrap: k.ListenAddrs()[:1], Options: &discover.Options{Bootstrap: k.ListenAddrs()[:1], Timeout: 10 * time.Second}}
	cl, err := src.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return src, cl
}

// TestClusterReport asks a kfake cluster of three brokers and cross-checks
// it with an inventory that lacks one broker, holds a host that is no
// broker, and a host whose meta.properties names another cluster.
func TestClusterReport(t *testing.T) {
	src, cl := askKfake(t, kfake.BrokerConfigs(map[string]string{"socket.listen.backlog.size": "50"}))
	// kfake advertises 127.0.0.1 for every broker: the names cannot tell
	// the hosts apart, meta.properties does.
	hosts := []report.Host{
		metaHost("kafka-0", "Xy3cluster", int(cl.Brokers[0].NodeID)),
		metaHost("kafka-1", "OtherCluster", int(cl.Brokers[1].NodeID)),
		{Name: "old-broker", Facts: &facts.Facts{}},
		{Name: "client-1", Facts: &facts.Facts{Role: facts.RoleClient}},
	}
	rc := clusterReport(cl, src, hosts, nil)
	if rc.ID != "Xy3cluster" || len(rc.Brokers) != 3 {
		t.Fatalf("cluster %+v", rc)
	}
	b0 := rc.Brokers[0]
	if b0.Host != "kafka-0" || b0.By != "meta.properties" || b0.Proof != facts.ProofProven {
		t.Errorf("broker 0: %+v", b0)
	}
	if c := b0.Configs["socket.listen.backlog.size"]; c != (report.ClusterConfig{Value: "50", Source: "dynamic"}) {
		t.Errorf("broker 0 backlog %+v", c)
	}
	got := map[string]int{}
	for i, p := range rc.Problems {
		got[p.Rule]++
		r, _ := rules.Lookup(p.Rule)
		if p.Severity != string(r.Severity) {
			t.Errorf("%s at %s, the catalog says %s", p.Rule, p.Severity, r.Severity)
		}
		if i > 0 && rules.Severity(rc.Problems[i-1].Severity).Rank() < rules.Severity(p.Severity).Rank() {
			t.Errorf("problems not by severity: %+v", rc.Problems)
		}
	}
	// kafka-1 names another cluster: no broker matches it; brokers 1 and 2
	// are then unaudited; kafka-1 and old-broker are no brokers of it; the
	// client host is not in the broker group.
	want := map[string]int{"broker-unaudited": 2, "host-not-a-broker": 2, "advertised-shared": 1}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d, want %d (%+v)", k, got[k], n, rc.Problems)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %+v", rc.Problems)
	}
	// kfake has no DescribeQuorum: the report says the quorum is not
	// listed, and the scan goes on.
	if rc.Quorum != nil || !strings.Contains(rc.QuorumError, "no broker accepts DescribeQuorum") {
		t.Errorf("quorum %+v, error %q", rc.Quorum, rc.QuorumError)
	}
}

func TestAttachRunningOnlyWhenProven(t *testing.T) {
	cl := &discover.Cluster{ID: "Xy3", Brokers: []discover.Broker{{NodeID: 1, Configs: map[string]discover.Config{"socket.listen.backlog.size": {Value: "50", Source: discover.SourceDefault}}}}}
	for _, tt := range []struct {
		name string
		h    report.Host
		want bool
	}{
		{"proven node 1", metaHost("a", "Xy3", 1), true},
		{"another cluster", metaHost("b", "Other", 1), false},
		{"a node the cluster does not list", metaHost("c", "Xy3", 2), false},
		{"no meta.properties", report.Host{Facts: &facts.Facts{Kafka: &facts.Kafka{LogDirs: []facts.LogDir{{Path: "/d"}}}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			attachRunning(cl, tt.h.Facts)
			got := tt.h.Facts.Kafka.Running["socket.listen.backlog.size"]
			if (got != facts.RunningConfig{}) != tt.want || (tt.want && got != facts.RunningConfig{Value: "50", Source: "default"}) {
				t.Errorf("running %+v, want set=%v", got, tt.want)
			}
		})
	}
	two := metaHost("d", "Xy3", 1)
	two.Facts.Kafka.LogDirs = append(two.Facts.Kafka.LogDirs, facts.LogDir{Path: "/e", Meta: &facts.MetaProperties{ClusterID: "Xy3", NodeID: 2, BrokerID: -1}})
	attachRunning(cl, two.Facts)
	if two.Facts.Kafka.Running != nil {
		t.Errorf("log dirs naming two nodes: running %+v", two.Facts.Kafka.Running)
	}
}

// TestClusterReportMapFile: a --broker-map file pins node ids to hosts
// whose names the cluster does not advertise; the match is still proven,
// or contradicted, by meta.properties.
func TestClusterReportMapFile(t *testing.T) {
	pin, err := discover.ParseMap("brokers.yaml", []byte("1: kafka-b\n2: kafka-c\n"))
	if err != nil {
		t.Fatal(err)
	}
	cl := &discover.Cluster{ID: "Xy3", Controller: 1, Brokers: []discover.Broker{
		{NodeID: 1, Host: "lb.example", Port: 9092}, {NodeID: 2, Host: "lb.example", Port: 9093}}}
	hosts := []discover.Host{
		{Name: "kafka-b", Facts: metaHost("kafka-b", "Xy3", 1).Facts},
		{Name: "kafka-c", Facts: metaHost("kafka-c", "Xy3", 1).Facts}, // says node 1: the map is wrong
	}
	rc := clusterOf(cl, []string{"lb.example:9092"}, hosts, pin)
	b1, b2 := rc.Brokers[0], rc.Brokers[1]
	if b1.Host != "kafka-b" || b1.By != "map" || b1.Proof != facts.ProofProven {
		t.Errorf("broker 1: %+v", b1)
	}
	if b2.Host != "kafka-c" || b2.By != "map" || b2.Proof != facts.ProofContradicted {
		t.Errorf("broker 2: %+v", b2)
	}
	mismatch := 0
	for _, p := range rc.Problems {
		if p.Rule == "broker-meta-mismatch" && p.Host == "kafka-c" {
			mismatch++
		}
	}
	if mismatch != 1 {
		t.Errorf("problems %+v, want one broker-meta-mismatch of kafka-c", rc.Problems)
	}
}

// TestClusterBoundsAgree: report lists as many brokers of a cluster in
// Prometheus as a scan takes from one.
func TestClusterBoundsAgree(t *testing.T) {
	if report.MaxClusterBrokerSeries != discover.MaxBrokers {
		t.Errorf("report.MaxClusterBrokerSeries %d, discover.MaxBrokers %d", report.MaxClusterBrokerSeries, discover.MaxBrokers)
	}
}

// jarHost is a host proven (meta.properties) to be broker id of cluster,
// its jars Apache Kafka jar ("" : no version read).
func jarHost(name, cluster string, id int, jar string) report.Host {
	h := metaHost(name, cluster, id)
	h.Facts.Kafka.Version, h.Facts.Kafka.Distribution = jar, "apache"
	if jar != "" {
		h.Facts.Kafka.Jar = "/opt/kafka_2.13-" + jar + "/libs/kafka_2.13-" + jar + ".jar"
	}
	return h
}

// TestClusterVersionCrossCheck: kfake answers ApiVersions with a chosen
// release's table (kfake.MaxVersions); the report shows the release each
// broker proves it is at least, and a host proven to be a broker whose
// jars are older gets broker-version-mismatch. Equal or newer jars, jars
// of no known version, and a host not proven to be the broker claim
// nothing.
func TestClusterVersionCrossCheck(t *testing.T) {
	for _, tt := range []struct {
		name     string
		opts     []kfake.Opt
		atLeast  string
		evidence string
		jars     []string // the jars of the hosts proven to be brokers 0, 1, 2
		mismatch []string // the hosts broker-version-mismatch names
		message  string   // its message for the first of them
	}{
		{"kfake at 3.8: jars 3.6.1, 3.8.0 and none", []kfake.Opt{kfake.MaxVersions(kversion.V3_8_0())}, "3.8", "Produce v11, first in 3.8",
			[]string{"3.6.1", "3.8.0", ""}, []string{"kafka-0"},
			"broker 0 speaks Produce v11 (Kafka ≥ 3.8) but the jars on kafka-0 say Apache Kafka 3.6.1 (/opt/kafka_2.13-3.6.1/libs/kafka_2.13-3.6.1.jar): kaudit judged another installation than the running one"},
		{"kfake at 3.6: jars 3.5.2, 3.6.2 and 4.0.0", []kfake.Opt{kfake.MaxVersions(kversion.V3_6_0())}, "3.6", "AddPartitionsToTxn v4, first in 3.6",
			[]string{"3.5.2", "3.6.2", "4.0.0"}, []string{"kafka-0"}, ""},
		{"kfake as it is: the newest table", nil, "4.4", "ApiVersions v5, first in 4.4", []string{"4.3.0", "4.4.0", "4.4.1"}, []string{"kafka-0"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, cl := askKfake(t, tt.opts...)
			var hosts []report.Host
			for i, b := range cl.Brokers {
				hosts = append(hosts, jarHost(fmt.Sprintf("kafka-%d", i), "Xy3cluster", int(b.NodeID), tt.jars[i]))
			}
			hosts = append(hosts, jarHost("kafka-other", "OtherCluster", 7, "0.11.0.3")) // not proven to be any broker
			rc := clusterReport(cl, src, hosts, nil)
			for _, b := range rc.Brokers {
				if b.KafkaAtLeast != tt.atLeast || b.KafkaEvidence != tt.evidence {
					t.Errorf("broker %d: Kafka ≥ %q (%q), want ≥ %s (%s)", b.NodeID, b.KafkaAtLeast, b.KafkaEvidence, tt.atLeast, tt.evidence)
				}
			}
			var named []string
			for _, p := range rc.Problems {
				if p.Rule != rules.RuleBrokerVersionMismatch {
					continue
				}
				named = append(named, p.Host)
				if p.Severity != "high" || (tt.message != "" && len(named) == 1 && p.Message != tt.message) {
					t.Errorf("%s %s: %q", p.Severity, p.Rule, p.Message)
				}
			}
			if fmt.Sprint(named) != fmt.Sprint(tt.mismatch) {
				t.Errorf("broker-version-mismatch on %v, want %v (%+v)", named, tt.mismatch, rc.Problems)
			}
		})
	}
}

// A broker whose ApiVersions answer is missing says why in the report,
// and claims nothing.
func TestClusterVersionUnread(t *testing.T) {
	cl := &discover.Cluster{ID: "Xy3", Brokers: []discover.Broker{{NodeID: 1, Host: "kafka-1", Port: 9092, APIVersionsError: "ApiVersions failed: i/o timeout"},
		{NodeID: 2, Host: "kafka-2", Port: 9092, APIVersions: map[int16]int16{1000: 1}}}}
	hosts := []discover.Host{{Name: "kafka-1", Facts: jarHost("kafka-1", "Xy3", 1, "0.8.2").Facts}, {Name: "kafka-2", Facts: jarHost("kafka-2", "Xy3", 2, "0.8.2").Facts}}
	rc := clusterOf(cl, []string{"kafka-1:9092"}, hosts, nil)
	if b := rc.Brokers[0]; b.KafkaAtLeast != "" || b.KafkaEvidence != "ApiVersions failed: i/o timeout" {
		t.Errorf("broker 1: %+v", b)
	}
	if b := rc.Brokers[1]; b.KafkaAtLeast != "" || !strings.Contains(b.KafkaEvidence, "proves a release") {
		t.Errorf("broker 2: %+v", b)
	}
	if len(rc.Problems) != 0 {
		t.Errorf("problems %+v", rc.Problems)
	}
}

// Two brokers with one node id: each is reported on its own host (not
// both on one), neither proven, the running settings attached to
// neither host, and the finding says so.
func TestClusterReportSharedNodeID(t *testing.T) {
	cl := &discover.Cluster{ID: "Xy3", Brokers: []discover.Broker{
		{NodeID: 1, Host: "kafka-a", Port: 9092, Configs: map[string]discover.Config{"socket.listen.backlog.size": {Value: "50", Source: discover.SourceStatic}}},
		{NodeID: 1, Host: "kafka-b", Port: 9092}}}
	hosts := []discover.Host{{Name: "kafka-a", Facts: metaHost("kafka-a", "Xy3", 1).Facts}, {Name: "kafka-b", Facts: metaHost("kafka-b", "Xy3", 1).Facts}}
	rc := clusterOf(cl, []string{"kafka-a:9092"}, hosts, nil)
	if len(rc.Brokers) != 2 || rc.Brokers[0].Host != "kafka-a" || rc.Brokers[1].Host != "kafka-b" {
		t.Fatalf("brokers %+v", rc.Brokers)
	}
	for _, b := range rc.Brokers {
		if b.Proof != facts.ProofUnproven {
			t.Errorf("broker on %s: %s, want unproven", b.Host, b.Proof)
		}
	}
	if len(rc.Problems) == 0 || rc.Problems[0].Rule != string(discover.NodeIDShared) || rc.Problems[0].Severity != "high" {
		t.Errorf("problems %+v, want broker-id-shared (high) first", rc.Problems)
	}
	f := metaHost("kafka-a", "Xy3", 1).Facts
	attachRunning(cl, f)
	if f.Kafka.Running != nil {
		t.Errorf("running settings attached by a node id the cluster gives twice: %v", f.Kafka.Running)
	}
}
