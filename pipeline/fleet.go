package pipeline

import (
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
)

// Fleet is the hosts a command works on: those of the inventory file
// Inventory that Limit selects (loadInventory), and how to connect to
// them (Connect).
type Fleet struct {
	Inventory, Limit string
	Connect          ConnectConfig
}

// connect is Connect for hosts of f, their known_hosts files checked
// (checkKnownHosts), its fan-out of *n connections fitted to the
// open-file limit (fitWarned). Close it when done.
func (f Fleet) connect(c Console, hosts []inventory.Host, n *int) (*transport.SSH, error) {
	runner, err := newRunner(hosts, f.Connect)
	if err != nil {
		return nil, err
	}
	if err := checkKnownHosts(runner, hosts); err != nil {
		runner.Close()
		return nil, err
	}
	*n = fitWarned(c, *n)
	return runner, nil
}
