package pipeline

import (
	"fmt"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
)

// knownHostsError is a known_hosts file named for a host (by the
// inventory or ssh_config) that no key can be checked against: found
// before any host is contacted, since every host checked against it
// would fail.
type knownHostsError struct {
	Source string // FILE:LINE of the first host in the inventory whose key is checked against it
	Host   string
	Err    *transport.KnownHostsProblem
}

func (e *knownHostsError) Error() string {
	return fmt.Sprintf("%s: host %s: %v; no host was contacted", e.Source, e.Host, e.Err)
}

func (e *knownHostsError) Unwrap() error { return e.Err }

// checkKnownHosts checks the known_hosts files of every host as runner
// resolves them (transport.SSH.CheckKnownHosts: each file once, jump
// hosts' too) and returns the first that is a directory, unreadable or
// malformed, as a *knownHostsError.
func checkKnownHosts(runner *transport.SSH, hosts []inventory.Host) error {
	seen := map[string]bool{}
	for _, h := range hosts {
		if p := runner.CheckKnownHosts(audit.Target(h, 0), seen); p != nil {
			return &knownHostsError{Source: h.Source, Host: h.Name, Err: p}
		}
	}
	return nil
}
