package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Host is one machine to audit, with every setting resolved: defaults,
// group vars and host vars merged, paths expanded, values validated.
type Host struct {
	Name           string         // inventory name, unique in the inventory
	Address        string         // host name or IP to dial, without brackets (default: Name); use net.JoinHostPort
	Port           int            // SSH port (default 22)
	User           string         // login user; "" = the caller uses the user running kaudit
	IdentityFiles  []string       // private keys, ~ expanded, checked readable; empty = caller uses OpenSSH's default keys
	UseAgent       bool           // offer ssh-agent keys (default true)
	KnownHosts     []string       // known_hosts files, ~ expanded (default ~/.ssh/known_hosts)
	HostKeyPolicy  string         // "strict" (default) | "accept-new" | "insecure"
	ProxyJump      string         // "[user@]host[:port]", validated; "" = direct
	Become         string         // "" or "sudo"
	ConnectTimeout time.Duration  // 0 = caller default
	Timeout        time.Duration  // whole-host deadline; 0 = caller default
	Connection     string         // "ssh" (default) | "local"
	KafkaPort      int            // broker listener port (default 9092)
	KafkaConfig    string         // absolute server.properties path; "" = discover
	KafkaHome      string         // absolute Kafka install path; "" = discover
	Interfaces     []string       // NICs to audit; empty = auto (default-route NICs)
	Groups         []string       // every group the host is in, transitively, sorted
	Profile        map[string]any // threshold overrides: defaults < group vars (parent before child) < host; never nil
	AssumeKernel   string         // kernel release planned for the pre-upgrade what-if ("" = no kernel upgrade planned)
	AssumeKafka    string         // Kafka version(s) planned, as --assume-kafka: "3.6.1", "confluent:7.6.0" ("" = none)
	Source         string         // "file:line" where the host is defined (first mention for Ansible)
	SSHConfig      bool           // follow ssh_config for this host (default true; ssh_config: false)
	Given          Given          // which connection settings the inventory set (they win over ssh_config)
}

// Given marks the connection settings an inventory set for a host itself
// (in defaults, a group or the host), as opposed to kaudit's defaults:
// those win over ssh_config, the others are filled from it.
type Given struct {
	Address, Port, User, IdentityFiles, UseAgent, KnownHosts, HostKeyPolicy, ProxyJump, ConnectTimeout bool
}

// Inventory is a loaded, validated inventory file.
type Inventory struct {
	Path   string
	Format string              // FormatKaudit or FormatAnsible
	Hosts  []Host              // in file order
	Groups map[string][]string // group → host names (transitive members), in host order
}

// Inventory formats.
const (
	FormatKaudit  = "kaudit"
	FormatAnsible = "ansible"
)

// maxSize bounds the inventory file size.
const maxSize = 16 << 20

// Load reads and parses an inventory file. See Parse.
func Load(path string) (*Inventory, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read inventory: %v", err), Hint: "check the path given on the command line"}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read inventory: %v", err)}
	}
	if len(data) > maxSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("inventory is larger than %d MiB", maxSize>>20)}
	}
	return Parse(path, data)
}

// Parse parses inventory data read from path (path is used in error
// messages, and relative identity files are resolved against its
// directory). The format is detected: a top-level mapping whose keys
// include defaults, groups, hosts or profile is kaudit's own format;
// anything else is read as an Ansible YAML inventory.
//
// On failure the error joins one *Error per problem, in line order; the
// inventory is nil.
func Parse(path string, data []byte) (*Inventory, error) {
	p := &parser{c: collector{file: path}, dir: filepath.Dir(path)}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.empty(0)
		}
		return nil, yamlError(path, data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p.c.add(extra.Line, "", "keep the whole inventory in one YAML document", "more than one YAML document")
	case !errors.Is(err, io.EOF):
		return nil, yamlError(path, data, err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = resolve(doc.Content[0])
	}
	if isNull(root) {
		return nil, p.empty(0)
	}
	if root.Kind != yaml.MappingNode {
		p.c.add(root.Line, "", "an inventory is a mapping: defaults:, groups:, hosts: (kaudit) or all: (Ansible)", "expected a mapping at the top level, got %s", describe(root))
		return nil, p.c.err()
	}
	inv := &Inventory{Path: path}
	var g *graph
	if isKaudit(root) {
		inv.Format = FormatKaudit
		inv.Hosts, g = p.parseKaudit(root)
	} else {
		inv.Format = FormatAnsible
		p.lenient = true
		inv.Hosts, g = p.parseAnsible(root)
	}
	if len(inv.Hosts) == 0 && len(p.c.errs) == 0 {
		return nil, p.empty(root.Line)
	}
	if err := p.c.err(); err != nil {
		return nil, err
	}
	inv.Groups = g.members(inv.Hosts)
	return inv, nil
}

// parser carries the state of one Parse call.
type parser struct {
	c       collector
	dir     string // directory of the inventory, for relative identity files
	lenient bool   // Ansible mode: accept "yes"/"no" and numeric strings as Ansible does
}

func (p *parser) empty(line int) error {
	return &Error{File: p.c.file, Line: line, Msg: "inventory has no hosts",
		Hint: "add hosts under hosts: or groups.NAME.hosts: (or all.hosts: in an Ansible inventory)"}
}

func (p *parser) source(line int) string { return p.c.file + ":" + strconv.Itoa(line) }

var kauditTopKeys = []string{"defaults", "groups", "hosts", "profile"}

// isKaudit reports whether the top level uses kaudit's own keys.
func isKaudit(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		for _, k := range kauditTopKeys {
			if root.Content[i].Value == k {
				return true
			}
		}
	}
	return false
}
