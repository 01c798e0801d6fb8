//go:build vm

package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// InventoryYAML returns a kaudit inventory (audit/inventory's own format,
// the fields test/testfleet writes for its sshd hosts) that reaches
// each guest as g.User with the lab's key and strict host-key checking
// against the guest's own known_hosts file. Hosts are named g.Name;
// become is "sudo" unless the user is root.
func InventoryYAML(guests ...*Guest) string {
	var b strings.Builder
	b.WriteString("defaults:\n")
	b.WriteString("  use_agent: false\n")
	b.WriteString("  ssh_config: false\n")
	b.WriteString("  host_key_policy: strict\n")
	b.WriteString("  connect_timeout: 15s\n")
	b.WriteString("  timeout: 120s\n") // TCG guests are slow: one gather takes seconds
	b.WriteString("  kafka: {port: 9092}\n")
	b.WriteString("hosts:\n")
	for _, g := range guests {
		become := `""`
		if g.User != "root" {
			become = "sudo"
		}
		fmt.Fprintf(&b, "  %s: {address: %s, port: %d, user: %s, become: %s, identity_files: [%s], known_hosts: [%s]}\n",
			g.Name, g.Addr, g.Port, g.User, become, g.KeyPath, g.KnownHosts)
	}
	return b.String()
}

// WriteInventory writes InventoryYAML(guests...) to a file in t.TempDir()
// and returns its path.
func WriteInventory(t testing.TB, guests ...*Guest) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "inventory.yaml")
	if err := os.WriteFile(p, []byte(InventoryYAML(guests...)), 0o644); err != nil {
		t.Fatalf("vm: %v", err)
	}
	return p
}
