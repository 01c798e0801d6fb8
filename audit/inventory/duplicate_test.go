package inventory

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDuplicateHostAddresses: a host listed twice in an Ansible inventory
// (two groups) with two different addresses loads with the last one, as
// Ansible does, and a warning naming both places and both addresses.
func TestDuplicateHostAddresses(t *testing.T) {
	cases := []struct {
		name, file, src string
		address         string
		warnings        []string
	}{
		{"yaml", "inv.yaml", "all:\n  children:\n    brokers:\n      hosts:\n        kafka-1:\n          ansible_host: 10.0.0.1\n    zone_b:\n      hosts:\n        kafka-1:\n          ansible_host: 10.0.0.2\n",
			"10.0.0.2", []string{"inv.yaml:6: host kafka-1 is defined twice with different addresses: 10.0.0.1 at inv.yaml:6, 10.0.0.2 at inv.yaml:10; Ansible uses the last one (10.0.0.2), and so does kaudit (hint: remove or correct one of the two)"}},
		{"yaml, same address", "inv.yaml", "all:\n  children:\n    brokers:\n      hosts:\n        kafka-1:\n          ansible_host: 10.0.0.1\n    zone_b:\n      hosts:\n        kafka-1:\n          ansible_host: 10.0.0.1\n",
			"10.0.0.1", nil},
		{"yaml, second mention without an address", "inv.yaml", "all:\n  children:\n    brokers:\n      hosts:\n        kafka-1:\n          ansible_host: 10.0.0.1\n    zone_b:\n      hosts:\n        kafka-1:\n",
			"10.0.0.1", nil},
		{"ini", "hosts.ini", "[brokers]\nkafka-1 ansible_host=10.0.0.1\n\n[zone_b]\nkafka-1 ansible_host=10.0.0.3\n[zone_c]\nkafka-1 ansible_host=10.0.0.4\n",
			"10.0.0.4", []string{
				"hosts.ini:2: host kafka-1 is defined twice with different addresses: 10.0.0.1 at hosts.ini:2, 10.0.0.3 at hosts.ini:5; Ansible uses the last one (10.0.0.3), and so does kaudit (hint: remove or correct one of the two)",
				"hosts.ini:5: host kafka-1 is defined twice with different addresses: 10.0.0.3 at hosts.ini:5, 10.0.0.4 at hosts.ini:7; Ansible uses the last one (10.0.0.4), and so does kaudit (hint: remove or correct one of the two)",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			inv, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(inv.Hosts) != 1 || inv.Hosts[0].Address != tc.address {
				t.Errorf("hosts %+v, want kafka-1 at %s", inv.Hosts, tc.address)
			}
			var want []string
			for _, w := range tc.warnings {
				want = append(want, strings.ReplaceAll(w, tc.file, path))
			}
			if !reflect.DeepEqual(inv.Warnings, want) {
				t.Errorf("warnings\n%q\nwant\n%q", inv.Warnings, want)
			}
		})
	}
}
