package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/discover"
	"github.com/kaudit/kaudit/internal/located"
)

// advertisedName is an advertised host name kaudit takes as an SSH host
// name (it comes from the cluster: untrusted).
var advertisedName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}$`)

// discoveredInventory is the fleet of a scan without an inventory (scan
// --bootstrap): one host per broker of cl, named by the map file's host
// when it names the broker, else by the advertised host name, its Kafka
// port the advertised port; how to connect comes from ssh_config, as for
// any inventory host without settings, but its host key is checked
// strictly whatever ssh_config says (a host the cluster names is never
// trusted on first use). It fails when two brokers would be one host (a
// load balancer or NAT advertised for all): only an inventory or a map
// file can say which host is which broker. seen is the node id the
// cluster gave each host.
func discoveredInventory(cl *discover.Cluster, src *ClusterSource) (inv *inventory.Inventory, seen map[string]int32, err error) {
	hosts := map[string]any{}
	seen = map[string]int32{}
	for _, b := range cl.Brokers {
		name, from := src.Map[b.NodeID], "the map file"
		if name == "" {
			name, from = b.Host, "advertised"
		}
		if !advertisedName.MatchString(name) {
			return nil, nil, located.Hint(fmt.Errorf("broker %d advertises the host %q, which is not a host name kaudit connects to", b.NodeID, name), "give an inventory, or a --broker-map naming its host")
		}
		if other, dup := seen[name]; dup {
			return nil, nil, located.Hint(fmt.Errorf("brokers %d and %d are both %s (%s): a load balancer or NAT", other, b.NodeID, name, from), "give an inventory, or a --broker-map naming each broker's host")
		}
		seen[name] = b.NodeID
		hosts[name] = map[string]any{"kafka": map[string]any{"port": b.Port}, "host_key_policy": inventory.PolicyStrict}
	}
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("cluster %s listed no brokers: nothing to audit", cl.ID)
	}
	data, err := yaml.Marshal(map[string]any{"hosts": hosts})
	if err != nil {
		return nil, nil, err
	}
	name := "brokers of " + strings.Join(src.Bootstrap, ",")
	inv, err = inventory.Parse(name+".yaml", data)
	if err != nil {
		return nil, nil, fmt.Errorf("the discovered brokers do not make an inventory: %w", err)
	}
	inv.Path = name
	return inv, seen, nil
}

// loadOrDiscover is f's inventory, or without one (scan --bootstrap and
// no INVENTORY) the cluster's brokers; the cluster is asked once and the
// scan reuses its answer.
func (f Fleet) loadOrDiscover(ctx context.Context, c Console, src *ClusterSource) (*inventory.Inventory, []inventory.Host, error) {
	if f.Inventory != "" || src == nil {
		inv, hosts, err := f.load(c)
		if err == nil {
			err = src.leaveOut(inv, hosts)
		}
		return inv, hosts, err
	}
	cl, err := src.Discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	src.found = cl
	inv, named, err := discoveredInventory(cl, src)
	src.named = named
	if err != nil {
		return nil, nil, err
	}
	hosts, err := inv.Select(f.Limit)
	if err == nil {
		err = src.leaveOut(inv, hosts)
	}
	if err != nil {
		return nil, nil, err
	}
	return inv, hosts, nil
}

// leaveOut records in s the hosts of inv that selected (--limit) leaves
// out; nothing for a nil s.
func (s *ClusterSource) leaveOut(inv *inventory.Inventory, selected []inventory.Host) error {
	if s == nil {
		return nil
	}
	all, err := inv.Select("")
	if err != nil {
		return err
	}
	in := map[string]bool{}
	for _, h := range selected {
		in[h.Name] = true
	}
	s.leftOut = nil
	for _, h := range all {
		if !in[h.Name] {
			s.leftOut = append(s.leftOut, h)
		}
	}
	return nil
}

// reread is a copy of s for a new load of the fleet (serve's start and
// each reload): its map file read again, no answer kept. A nil s is nil.
func (s *ClusterSource) reread() (*ClusterSource, error) {
	if s == nil {
		return nil, nil
	}
	n := *s
	n.found, n.named = nil, nil
	if n.MapFile != "" {
		m, err := discover.LoadMap(n.MapFile)
		if err != nil {
			return nil, err
		}
		n.Map = m
	}
	return &n, nil
}

// rollbackTarget is the arguments of kaudit rollback that select the
// hosts f is: its inventory, or without one the same cluster asked the
// same way (--bootstrap and the client flags; secrets only by the file
// or variable that holds them), and the ssh_config f connects through.
func (f Fleet) rollbackTarget(src *ClusterSource) []string {
	var args []string
	if f.Inventory != "" || src == nil {
		args = append(args, f.Inventory)
	} else {
		args = src.args()
	}
	if f.Connect.SSHConfig != "" {
		args = append(args, "--ssh-config", f.Connect.SSHConfig)
	}
	return args
}

// fixTarget is rollbackTarget for kaudit fix: the inventory and the
// cluster's flags both (the gate of a rollout reads the cluster), and
// --limit when given.
func (f Fleet) fixTarget(src *ClusterSource) []string {
	args := f.rollbackTarget(src)
	if f.Inventory != "" && src != nil {
		args = append(args[:1], append(src.args(), args[1:]...)...)
	}
	if f.Limit != "" {
		args = append(args, "--limit", f.Limit)
	}
	return args
}

// args are the flags that select the cluster src (a password only by
// its file or environment variable).
func (src *ClusterSource) args() []string {
	var args []string
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	c := src.Client
	add("--bootstrap", strings.Join(src.Bootstrap, ","))
	add("--command-config", src.CommandConfig)
	add("--broker-map", src.MapFile)
	add("--security-protocol", c.Protocol)
	add("--sasl-mechanism", c.Mechanism)
	add("--sasl-user", c.User)
	add("--sasl-password-file", c.PasswordFile)
	add("--sasl-password-env", c.PasswordEnv)
	add("--tls-ca", c.CAFile)
	add("--tls-cert", c.CertFile)
	add("--tls-key", c.KeyFile)
	add("--tls-server-name", c.ServerName)
	return args
}
