//go:build vm

package vm

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
)

// TestInventoryYAML loads what InventoryYAML writes with kaudit's own
// inventory loader (no guest is booted: the files only need to exist).
func TestInventoryYAML(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	for _, f := range []string{key, filepath.Join(dir, "kh1"), filepath.Join(dir, "kh2")} {
		if err := os.WriteFile(f, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	guests := []*Guest{
		{Name: "vm1", Addr: "127.0.0.1", Port: 40001, User: "root", KeyPath: key, KnownHosts: filepath.Join(dir, "kh1")},
		{Name: "vm2", Addr: "127.0.0.1", Port: 40002, User: "kaudit", KeyPath: key, KnownHosts: filepath.Join(dir, "kh2")},
	}
	inv, err := inventory.Parse(filepath.Join(dir, "inventory.yaml"), []byte(InventoryYAML(guests...)))
	if err != nil {
		t.Fatalf("%v\n%s", err, InventoryYAML(guests...))
	}
	if len(inv.Hosts) != 2 {
		t.Fatalf("%d hosts, want 2", len(inv.Hosts))
	}
	for i, h := range inv.Hosts {
		g := guests[i]
		wantBecome := ""
		if g.User != "root" {
			wantBecome = "sudo"
		}
		got := []any{h.Name, h.Address, h.Port, h.User, h.IdentityFiles, h.UseAgent, h.KnownHosts, h.HostKeyPolicy, h.Become, h.SSHConfig, h.Timeout, h.KafkaPort}
		want := []any{g.Name, g.Addr, g.Port, g.User, []string{key}, false, []string{g.KnownHosts}, "strict", wantBecome, false, 120 * time.Second, 9092}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("host %d = %v, want %v", i, got, want)
		}
	}
}
