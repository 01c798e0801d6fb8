package main

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/rules"
)

func TestAddrUnique(t *testing.T) {
	seen := map[string]int{}
	for i := 0; i < 130000; i++ {
		a := addr(i, 2222)
		if j, dup := seen[a]; dup {
			t.Fatalf("hosts %d and %d share %s", j, i, a)
		}
		seen[a] = i
	}
	if addr(0, 2222) != "127.1.0.1:2222" || addr(250, 22) != "127.1.1.1:22" || addr(62500, 22) != "127.2.0.1:22" {
		t.Errorf("addr: %s %s %s", addr(0, 2222), addr(250, 22), addr(62500, 22))
	}
}

// The written inventory loads and every host in it answers a scan with
// its host key checked (260 hosts: past the first 250-address block).
func TestFleetInventoryScans(t *testing.T) {
	dir := t.TempDir()
	// A port the system picks, not simfleet's 2222: a benchmark's fleet
	// may be running on this machine.
	l, err := net.Listen("tcp", "127.1.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	f, err := startFleet(dir, 260, port)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeInventory(dir, f); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(filepath.Join(dir, "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 260 || inv.Hosts[259].Address != "127.1.1.10" || inv.Hosts[0].Name != "sim-00000-centos7" {
		t.Fatalf("inventory: %d hosts, last %+v", len(inv.Hosts), inv.Hosts[len(inv.Hosts)-1])
	}
	for _, r := range audit.Scan(context.Background(), inv.Hosts, audit.Options{SysctlKeys: rules.SysctlKeys()}) {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Host.Name, r.Err)
		}
	}
	if n := sessions(f); n != 260 {
		t.Errorf("%d sessions served, want 260", n)
	}
}
