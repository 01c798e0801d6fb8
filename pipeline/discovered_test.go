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
			inv, named, err := discoveredInventory(&discover.Cluster{ID: "C", Brokers: tt.brokers}, &ClusterSource{Bootstrap: []string{"b:9092"}, Map: tt.pin})
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
				// A host the cluster names is never trusted on first use,
				// whatever ssh_config says: the inventory sets strict.
				if h.HostKeyPolicy != "strict" || !h.Given.HostKeyPolicy {
					t.Errorf("host %s: host key policy %q (given %v), want strict, given", h.Name, h.HostKeyPolicy, h.Given.HostKeyPolicy)
				}
				if b, ok := (&discover.Cluster{Brokers: tt.brokers}).Broker(named[h.Name]); !ok || b.Port != int32(h.KafkaPort) {
					t.Errorf("host %s: node id %d is no broker on its port", h.Name, named[h.Name])
				}
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

// TestUndoLine: the undo line names what selects the same hosts: the
// inventory, or the cluster asked the same way (secrets by file or
// variable only), the ssh_config and the journal directory given.
func TestUndoLine(t *testing.T) {
	src := &ClusterSource{Bootstrap: []string{"k1:9093", "k2:9093"}, MapFile: "my map.yaml",
		Client: discover.ClientConfig{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", User: "audit", PasswordFile: "pw", CAFile: "ca.pem"}}
	for _, tt := range []struct {
		name  string
		fleet Fleet
		src   *ClusterSource
		want  string
	}{
		{"inventory", Fleet{Inventory: "inv.yaml"}, nil, "undo: kaudit rollback inv.yaml --run R1\n"},
		{"inventory and bootstrap", Fleet{Inventory: "inv.yaml"}, src, "undo: kaudit rollback inv.yaml --run R1\n"},
		{"the cluster", Fleet{Connect: ConnectConfig{SSHConfig: "/etc/kaudit/ssh_config"}}, src,
			"undo: kaudit rollback --bootstrap 'k1:9093,k2:9093' --broker-map 'my map.yaml' --security-protocol SASL_SSL --sasl-mechanism SCRAM-SHA-512 --sasl-user audit --sasl-password-file pw --tls-ca ca.pem --ssh-config /etc/kaudit/ssh_config --run R1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeUndo(&b, ApplyConfig{JournalPath: "j.json", RunID: "R1"}, tt.fleet.rollbackTarget(tt.src))
			if got := strings.TrimPrefix(b.String(), "journal: j.json\n"); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
