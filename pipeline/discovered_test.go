package pipeline

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/discover"
)

func TestDiscoveredInventory(t *testing.T) {
	brokers := []discover.Broker{{NodeID: 1, Host: "kafka-1.internal", Port: 9093}, {NodeID: 2, Host: "kafka-2.internal", Port: 9092}}
	shared := []discover.Broker{{NodeID: 1, Host: "lb.internal", Port: 9092}, {NodeID: 2, Host: "lb.internal", Port: 9093}}
	for _, tt := range []struct {
		name    string
		brokers []discover.Broker
		pin     map[int32]string
		want    map[string]int // host → kafka port
		err     string
	}{
		{"advertised names", brokers, nil, map[string]int{"kafka-1.internal": 9093, "kafka-2.internal": 9092}, ""},
		{"the map wins", brokers, map[int32]string{2: "k2"}, map[string]int{"kafka-1.internal": 9093, "k2": 9092}, ""},
		{"one address for all", shared, nil, nil, "brokers 1 and 2 are both lb.internal (advertised): a load balancer or NAT (hint: give an inventory, or a --broker-map naming each broker's host)"},
		{"the map tells them apart", shared, map[int32]string{1: "a", 2: "b"}, map[string]int{"a": 9092, "b": 9093}, ""},
		{"a name that is no host", []discover.Broker{{NodeID: 3, Host: "-oProxyCommand=x", Port: 9092}}, nil, nil, `broker 3 advertises the host "-oProxyCommand=x", which is not a host name kaudit connects to`},
		{"no brokers", nil, nil, nil, "cluster C listed no brokers: nothing to audit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := discoveredInventory(&discover.Cluster{ID: "C", Brokers: tt.brokers}, &ClusterSource{Bootstrap: []string{"b:9092"}, Map: tt.pin})
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			hosts, err := inv.Select("")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, h := range hosts {
				got[h.Name] = h.KafkaPort
			}
			if len(got) != len(tt.want) {
				t.Fatalf("hosts %v, want %v", got, tt.want)
			}
			for n, p := range tt.want {
				if got[n] != p {
					t.Errorf("host %s port %d, want %d (%v)", n, got[n], p, got)
				}
			}
			if inv.Path != "brokers of b:9092" {
				t.Errorf("path %q", inv.Path)
			}
		})
	}
}
