package inventory

import (
	"strings"
	"testing"
)

func TestClientsGroup(t *testing.T) {
	inv, err := Parse("inv.yaml", []byte("clients_group: producers\ngroups:\n  producers:\n    hosts:\n      p1: {address: 10.0.0.9}\nhosts:\n  b1: {address: 10.0.0.1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.ClientsGroup != "producers" || len(inv.Groups["producers"]) != 1 {
		t.Fatalf("clients group %q, groups %v", inv.ClientsGroup, inv.Groups)
	}
	if inv, err := Parse("inv.yaml", []byte("hosts:\n  b1: {address: 10.0.0.1}\n")); err != nil || inv.ClientsGroup != "" {
		t.Fatalf("unset: %q %v", inv.ClientsGroup, err)
	}
	for _, bad := range []string{"clients_group: [a]\n", "clients_group: '-x'\n", "clients_group: true\n"} {
		_, err := Parse("inv.yaml", []byte(bad+"hosts:\n  b1: {address: 10.0.0.1}\n"))
		if err == nil || !strings.Contains(err.Error(), "inv.yaml:1: clients_group") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
