package inventory

import (
	"strings"
	"testing"
)

// TestRack: a broker's rack from the inventory (kaudit's rack, Ansible's
// kaudit_rack in YAML and INI), a group's value overridden by a host's,
// and a rack that is not a plain label refused with the line.
func TestRack(t *testing.T) {
	cases := []struct{ name, path, src, want string }{
		{"kaudit", "inv.yaml", "groups:\n  kafka:\n    vars: {rack: r1}\n    hosts:\n      b1: {}\n      b2: {rack: r2}\n", "b1=r1 b2=r2"},
		{"ansible yaml", "inv.yml", "all:\n  children:\n    kafka:\n      vars: {kaudit_rack: r1}\n      hosts:\n        b1:\n        b2: {kaudit_rack: r2}\n", "b1=r1 b2=r2"},
		{"ansible ini", "hosts.ini", "[kafka]\nb1\nb2 kaudit_rack=r2\n[kafka:vars]\nkaudit_rack=r1\n", "b1=r1 b2=r2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse(c.path, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range inv.Hosts {
				got = append(got, h.Name+"="+h.Rack)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("racks %v, want %s", got, c.want)
			}
		})
	}
	_, err := Parse("inv.yaml", []byte("hosts:\n  b1: {rack: \"r 1; rm\"}\n"))
	if err == nil || !strings.Contains(err.Error(), "inv.yaml:2") || !strings.Contains(err.Error(), "is not a plain label") {
		t.Errorf("bad rack: %v", err)
	}
}
