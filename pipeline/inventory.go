package pipeline

import (
	"fmt"

	"github.com/kaudit/kaudit/audit/inventory"
)

// loadInventory loads the inventory at path and selects the hosts limit
// matches (inventory.Select: groups, hosts, globs, !exclusions; "" is
// every host). Any problem is found here, before a connection is made.
func loadInventory(path, limit string) (*inventory.Inventory, []inventory.Host, error) {
	inv, err := inventory.Load(path)
	if err != nil {
		return nil, nil, err
	}
	hosts, err := inv.Select(limit)
	if err != nil {
		return nil, nil, err
	}
	return inv, hosts, nil
}

// load is loadInventory of f's inventory and limit, the inventory's
// warnings (a host defined twice with two addresses) on c's stderr.
func (f Fleet) load(c Console) (*inventory.Inventory, []inventory.Host, error) {
	inv, hosts, err := loadInventory(f.Inventory, f.Limit)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range inv.Warnings {
		c.Warn(w)
	}
	return inv, hosts, nil
}

// clientsGroup is the inventory group of producer/consumer hosts: group
// when set (the flag wins), else the inventory's clients_group: ("" leaves
// audit.DefaultClientsGroup).
func clientsGroup(group string, inv *inventory.Inventory) string {
	if group != "" {
		return group
	}
	return inv.ClientsGroup
}

// selectShard is the hosts of shard spec (K/N, inventory.ParseShard) and
// the shard as the report records it; "" selects every host.
func selectShard(hosts []inventory.Host, spec string) ([]inventory.Host, string, error) {
	if spec == "" {
		return hosts, "", nil
	}
	s, err := inventory.ParseShard(spec)
	if err != nil {
		return nil, "", fmt.Errorf("--shard: %v", err)
	}
	return inventory.SelectShard(s, hosts), s.String(), nil
}
