package audit

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kaudit/kaudit/audit/inventory"
)

// TestRDNSTargets: each broker resolves its own address and its group's
// others, in ring order after it, at most gather.MaxRDNSPeers; clients,
// other groups and loopback addresses are never named.
func TestRDNSTargets(t *testing.T) {
	hosts := []inventory.Host{
		{Name: "b3", Address: "10.0.0.3", Groups: []string{"all", "kafka-a"}},
		{Name: "b1", Address: "10.0.0.1", Groups: []string{"all", "kafka-a"}},
		{Name: "b2", Address: "b2.example.com", Groups: []string{"all", "kafka-a"}},
		{Name: "c1", Address: "10.0.1.1", Groups: []string{"all", "kafka-b"}},
		{Name: "p1", Address: "10.0.9.1", Groups: []string{"all", "clients"}},
		{Name: "l1", Address: "127.0.0.1"},
		{Name: "u1", Address: "10.0.2.1"},
		{Name: "v6", Address: "fd00:0:0::1", Groups: []string{"kafka-c"}},
		{Name: "ll", Address: "fe80::1%eth0", Groups: []string{"kafka-c"}},
	}
	rd := newRDNSTargets(hosts, "")
	for i, want := range []struct {
		self  string
		peers []string
	}{
		{"10.0.0.3", []string{"10.0.0.1", "b2.example.com"}},
		{"10.0.0.1", []string{"b2.example.com", "10.0.0.3"}},
		{"b2.example.com", []string{"10.0.0.3", "10.0.0.1"}},
		{"10.0.1.1", nil},
		{"", nil},
		{"", []string{"10.0.2.1"}},
		{"10.0.2.1", nil},
		{"fd00::1", nil}, // canonical, as getent prints it
		{"", []string{"fd00::1"}},
	} {
		if rd.self[i] != want.self || !reflect.DeepEqual(rd.peers[i], want.peers) {
			t.Errorf("%s: self %q peers %q, want %q %q", hosts[i].Name, rd.self[i], rd.peers[i], want.self, want.peers)
		}
	}

	var big []inventory.Host
	for i := range 20 {
		big = append(big, inventory.Host{Name: fmt.Sprintf("b%02d", i), Address: fmt.Sprintf("10.1.0.%d", i), Groups: []string{"kafka"}})
	}
	rd = newRDNSTargets(big, "")
	looked := map[string]int{}
	for i := range big {
		if len(rd.peers[i]) != 7 {
			t.Fatalf("%s: %d peers, want 7", big[i].Name, len(rd.peers[i]))
		}
		for _, a := range rd.peers[i] {
			looked[a]++
		}
	}
	if len(looked) != 20 || looked["10.1.0.0"] != 7 {
		t.Errorf("each broker looked up by 7 peers, got %v", looked)
	}
}
