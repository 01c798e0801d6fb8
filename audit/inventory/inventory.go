package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/internal/located"
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
	Rack           string         // the broker's rack (rack / kaudit_rack), for fix --batch-by rack ("" = unknown)
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
	Format string              // FormatKaudit, FormatAnsible, FormatAnsibleINI or FormatAnsibleList
	Hosts  []Host              // in file order
	Groups map[string][]string // group → host names (transitive members), in host order
	// ClientsGroup is the top-level clients_group: of kaudit's format: the
	// group of producer/consumer hosts ("" when not set).
	ClientsGroup string
	// Warnings are what loads but looks like a mistake (one host given
	// two addresses), each "FILE:LINE: …", for the caller to show.
	Warnings []string
}

// Inventory formats.
const (
	FormatKaudit      = "kaudit"       // kaudit's own YAML
	FormatAnsible     = "ansible"      // Ansible YAML inventory (+ group_vars/, host_vars/)
	FormatAnsibleINI  = "ansible-ini"  // Ansible INI inventory (+ group_vars/, host_vars/)
	FormatAnsibleList = "ansible-list" // JSON of ansible-inventory --list or a dynamic inventory script
)

// maxSize bounds the inventory file size.
const maxSize = 16 << 20

// Stdin is the path that makes Load read standard input, e.g.
// ansible-inventory -i prod --list | kaudit scan -
const Stdin = "-"

// Load reads and parses an inventory file, or standard input when path is
// Stdin. See Parse.
func Load(path string) (*Inventory, error) {
	var data []byte
	var err error
	if path == Stdin {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, maxSize+1))
		if err == nil && len(data) > maxSize {
			err = fmt.Errorf("larger than %d MiB", maxSize>>20)
		}
	} else {
		data, err = readLimited(path)
	}
	if err != nil {
		return nil, &Error{File: displayName(path), Msg: fmt.Sprintf("cannot read inventory: %v", err), Hint: "check the path given on the command line"}
	}
	return Parse(path, data)
}

func displayName(path string) string {
	if path == Stdin {
		return "stdin"
	}
	return path
}

// Parse parses inventory data read from path (path is used in error
// messages, and relative identity files and the group_vars/ and host_vars/
// directories are found beside it; Stdin means the current directory and no
// vars directories). The format is detected (see detectFormat): kaudit's
// own YAML (top-level defaults, groups, hosts or profile), the JSON of
// ansible-inventory --list (_meta, or groups listing hosts), an Ansible YAML
// inventory, or an Ansible INI inventory.
//
// On failure the error joins one *Error per problem, in file and line
// order; the inventory is nil.
func Parse(path string, data []byte) (*Inventory, error) {
	p := &parser{c: collector{file: displayName(path)}, dir: filepath.Dir(path), stdin: path == Stdin}
	if p.stdin {
		p.dir = "."
	}
	if detectFormat(path, data) == FormatAnsibleINI {
		p.lenient = true
		hosts, g := p.parseINI(data)
		if p.c.stoppedAt > 0 {
			return nil, p.c.err() // no inventory: its hosts are not worth resolving
		}
		return p.finish(&Inventory{Path: path, Format: FormatAnsibleINI}, p.resolveAnsible(hosts, g), g, 0)
	}
	root, err := p.yamlRoot(data)
	if err != nil || root == nil {
		return nil, err
	}
	inv := &Inventory{Path: path}
	var hosts []Host
	var g *graph
	switch {
	case isKaudit(root):
		inv.Format = FormatKaudit
		hosts, g = p.parseKaudit(root)
	case isAnsibleList(root):
		inv.Format, p.lenient = FormatAnsibleList, true
		table, lg := p.parseAnsibleList(root)
		p.stdin = true // Ansible applied group_vars/ and host_vars/ already
		hosts, g = p.resolveAnsible(table, lg), lg
	default:
		inv.Format, p.lenient = FormatAnsible, true
		table, ag := p.parseAnsible(root)
		hosts, g = p.resolveAnsible(table, ag), ag
	}
	return p.finish(inv, hosts, g, root.Line)
}

// yamlRoot decodes data as one YAML document whose top level is a mapping.
// A nil root with a nil error cannot happen: an empty file is an error.
func (p *parser) yamlRoot(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, p.empty(0)
		}
		return nil, located.YAMLSyntax(p.c.file, data, err, "")
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p.c.add(extra.Line, "", "keep the whole inventory in one YAML document", "more than one YAML document")
	case !errors.Is(err, io.EOF):
		return nil, located.YAMLSyntax(p.c.file, data, err, "")
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = located.Resolve(doc.Content[0])
	}
	if isNull(root) {
		return nil, p.empty(0)
	}
	if root.Kind != yaml.MappingNode {
		p.c.add(root.Line, "", "an inventory is a mapping: defaults:, groups:, hosts: (kaudit) or all: (Ansible)", "expected a mapping at the top level, got %s", located.DescribeNode(root))
		return nil, p.c.err()
	}
	return root, nil
}

// finish reports the collected problems, or completes inv.
func (p *parser) finish(inv *Inventory, hosts []Host, g *graph, line int) (*Inventory, error) {
	if len(hosts) == 0 && !p.c.failed() {
		return nil, p.empty(line)
	}
	if err := p.c.err(); err != nil {
		return nil, err
	}
	inv.Hosts, inv.Groups, inv.ClientsGroup, inv.Warnings = hosts, g.members(hosts), p.clientsGroup, p.c.warns
	return inv, nil
}

var (
	iniHeaderRE = regexp.MustCompile(`^\[[^\]]*\]\s*$`)
	yamlKeyRE   = regexp.MustCompile(`^(---|\{|-\s|[^\s=#;]*:(\s|$))`)
)

// detectFormat tells an INI inventory from YAML and JSON: by extension
// (.yml, .yaml, .json are YAML; .ini is INI), else by the first line that
// is not blank or a comment: "[group]" or a host line means INI, "key:",
// "---", "{" or "- " mean YAML. It returns FormatAnsibleINI or "".
func detectFormat(path string, data []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yml", ".yaml", ".json":
		return ""
	case ".ini":
		return FormatAnsibleINI
	}
	for rest := data; len(rest) > 0; {
		var raw []byte
		raw, rest, _ = bytes.Cut(rest, []byte("\n"))
		l := strings.TrimSpace(string(raw[:min(len(raw), maxLine)]))
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if iniHeaderRE.MatchString(l) || !yamlKeyRE.MatchString(l) {
			return FormatAnsibleINI
		}
		return ""
	}
	return ""
}

// parser carries the state of one Parse call.
type parser struct {
	c       collector
	dir     string // directory of the inventory, for relative identity files
	lenient bool   // Ansible mode: accept "yes"/"no" and numeric strings as Ansible does
	stdin   bool   // no group_vars/ and host_vars/ to read (stdin, or ansible-inventory output)

	varsDirs map[string]map[string]fs.DirEntry // group_vars/, host_vars/ listings

	clientsGroup string // kaudit format: clients_group:
}

func (p *parser) empty(line int) error {
	return &Error{File: p.c.file, Line: line, Msg: "inventory has no hosts",
		Hint: "add hosts under hosts: or groups.NAME.hosts: (or all.hosts: in an Ansible inventory)"}
}

func (p *parser) source(line int) string { return p.c.file + ":" + strconv.Itoa(line) }

var kauditTopKeys = []string{"defaults", "groups", "hosts", "profile", "clients_group"}

// isKaudit reports whether the top level uses kaudit's own keys.
func isKaudit(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if slices.Contains(kauditTopKeys, root.Content[i].Value) {
			return true
		}
	}
	return false
}
