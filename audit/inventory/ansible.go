package inventory

import (
	"sort"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/suggest"
	"gopkg.in/yaml.v3"
)

// Ansible variables kaudit reads. Every other variable is ignored, as
// Ansible inventories carry many free-form ones — except kaudit_* names,
// which must be known. A kaudit_X variable is the setting X of kaudit's
// own format (kaudit_kafka_X: its kafka: X).
var ansibleSetters = withKauditVars(map[string]setter{
	"ansible_host":                 (*parser).setAddress,
	"ansible_ssh_host":             (*parser).setAddress,
	"ansible_port":                 (*parser).setSSHPort,
	"ansible_ssh_port":             (*parser).setSSHPort,
	"ansible_user":                 (*parser).setUser,
	"ansible_ssh_user":             (*parser).setUser,
	"ansible_ssh_private_key_file": (*parser).setIdentityFiles,
	"ansible_private_key_file":     (*parser).setIdentityFiles,
	"ansible_become":               (*parser).setAnsibleBecome,
	"ansible_become_method":        (*parser).checkBecomeMethod,
	"ansible_connection":           (*parser).setAnsibleConnection,
}, "interfaces", "host_key_policy", "known_hosts", "timeout", "connect_timeout", "profile",
	"proxy_jump", "use_agent", "ssh_config", "assume_kernel", "assume_kafka", "rack")

// withKauditVars adds to m the kaudit_KEY variable of each host setting
// key and a kaudit_kafka_KEY one of every kafka setting.
func withKauditVars(m map[string]setter, keys ...string) map[string]setter {
	for _, k := range keys {
		m["kaudit_"+k] = hostSetters[k]
	}
	for k, set := range kafkaSetters {
		m["kaudit_kafka_"+k] = set
	}
	return m
}

var kauditVars = func() []string {
	var out []string
	for k := range ansibleSetters {
		if strings.HasPrefix(k, "kaudit_") {
			out = append(out, k)
		}
	}
	sort.Strings(out) // a stable "known keys" hint
	return out
}()

var ansibleGroupKeys = []string{"hosts", "vars", "children"}

func (p *parser) setAnsibleBecome(s *settings, n *yaml.Node, field string) {
	if v, ok := p.boolean(n, field); ok {
		if v {
			s.become.set("sudo")
		} else {
			s.become.set("")
		}
	}
}

func (p *parser) checkBecomeMethod(_ *settings, n *yaml.Node, field string) {
	if v, ok := p.str(n, field); ok && v != "sudo" {
		p.c.add(line(n), field, "kaudit only becomes root with sudo; remove the variable or set it to sudo", "unsupported become method %q", v)
	}
}

func (p *parser) setAnsibleConnection(s *settings, n *yaml.Node, field string) {
	v, ok := p.str(n, field)
	if !ok {
		return
	}
	switch v {
	case "local":
		s.connection.set(ConnLocal)
	case "ssh", "smart", "paramiko", "ansible.builtin.ssh", "ansible.builtin.paramiko_ssh", "paramiko_ssh":
		s.connection.set(ConnSSH)
	case "ansible.builtin.local":
		s.connection.set(ConnLocal)
	default:
		p.c.add(line(n), field, "kaudit connects with ssh or runs locally; leave such hosts out with --limit '!GROUP'", "unsupported connection %q", v)
	}
}

// ansibleVars decodes a vars mapping, returning the settings and, for group
// vars, ansible_group_priority.
func (p *parser) ansibleVars(n *yaml.Node, field string, s *settings, isGroup bool) (priority int, hasPriority bool) {
	for _, e := range p.mapping(n, field, "a mapping of variables", "") {
		f := join(field, e.key)
		if e.key == "ansible_group_priority" && isGroup {
			if v, ok := p.integer(e.value, f); ok {
				priority, hasPriority = v, true
			}
			continue
		}
		if set, ok := ansibleSetters[e.key]; ok {
			if isVaulted(e.value) {
				p.c.add(e.kNode.Line, f, "kaudit never decrypts vaults; pipe ansible-inventory -i INVENTORY --list into kaudit scan - instead", "%s is encrypted with ansible-vault", e.key)
				continue
			}
			set(p, s, e.value, f)
			continue
		}
		if strings.HasPrefix(e.key, "kaudit_") {
			p.c.add(e.kNode.Line, f, unknownHint(e.key, kauditVars), "unknown kaudit variable %q", e.key)
		}
	}
	return priority, hasPriority
}

// ansibleLoader holds what parseAnsible collects while it walks the file.
type ansibleLoader struct {
	p        *parser
	g        *graph
	hosts    hostTable
	visiting map[*yaml.Node]bool // group bodies on the current path, against alias loops
}

// parseAnsible reads an Ansible YAML inventory. The implicit group "all"
// always exists; top-level groups are its children.
func (p *parser) parseAnsible(root *yaml.Node) (hostTable, *graph) {
	l := &ansibleLoader{p: p, g: newGraph(), visiting: map[*yaml.Node]bool{}}
	l.g.add("all", 0)
	for _, e := range p.entries(root, "") {
		parent := "all"
		if e.key == "all" {
			parent = ""
		}
		l.group(e.key, e.kNode, e.value, join("", e.key), parent)
	}
	l.g.findCycles(p)

	return l.hosts, l.g
}

// group decodes one group (key k, body n) listed under parent ("" for all).
func (l *ansibleLoader) group(name string, k, n *yaml.Node, field, parent string) {
	p := l.p
	if pr := checkGroup(name); pr != nil {
		p.c.add(k.Line, field, pr.hint, "%s", pr.msg)
		return
	}
	l.g.add(name, k.Line)
	if parent != "" {
		l.g.addChild(parent, name, ref{k.Line, field})
	}
	if isNull(n) {
		return
	}
	body := located.Resolve(n)
	if body.Kind != yaml.MappingNode {
		p.wrongType(n, field, "a group (a mapping with hosts, vars or children)", "")
		return
	}
	if l.visiting[body] {
		p.c.add(line(n), field, "an alias cannot include the group that defines its anchor", "group %q contains itself through a YAML alias", name)
		return
	}
	l.visiting[body] = true
	defer delete(l.visiting, body)
	for _, e := range p.entries(n, field) {
		l.groupEntry(name, e, field, parent)
	}
}

// groupEntry decodes one key of a group's body.
func (l *ansibleLoader) groupEntry(name string, e entry, field, parent string) {
	p := l.p
	f := join(field, e.key)
	switch e.key {
	case "vars":
		s := &settings{}
		if prio, ok := p.ansibleVars(e.value, f, s, true); ok {
			l.g.priority[name] = prio
		}
		l.g.addVars(name, s)
	case "children":
		l.children(name, e.value, f)
	case "hosts":
		l.groupHosts(name, e.value, f)
	default:
		p.c.add(e.kNode.Line, f, unknownGroupKeyHint(name, e.key, field, parent), "unknown key %q in group %q", e.key, name)
	}
}

// unknownGroupKeyHint says what to write instead of an unknown key in a
// group; at top level it suspects a kaudit-format file read as Ansible.
func unknownGroupKeyHint(name, key, field, parent string) string {
	hint := "an Ansible group has only hosts:, vars: and children:"
	if c := suggest.Closest(key, ansibleGroupKeys); c != "" {
		hint = "did you mean \"" + c + "\"? " + hint
	}
	if parent == "" || parent == "all" && field == join("", name) {
		if c := suggest.Closest(name, kauditTopKeys); c != "" {
			hint = "this file was read as an Ansible inventory; for kaudit's format did you mean \"" + c + ":\"?"
		}
	}
	return hint
}

// children decodes a group's children: mapping, each a nested group.
func (l *ansibleLoader) children(name string, n *yaml.Node, f string) {
	p := l.p
	for _, c := range p.mapping(n, f, "a mapping of child groups", "write children as  name:  (one per line), each optionally with hosts/vars/children") {
		l.group(c.key, c.kNode, c.value, join(f, c.key), name)
	}
}

// groupHosts decodes a group's hosts: mapping of host key to variables.
func (l *ansibleLoader) groupHosts(name string, n *yaml.Node, f string) {
	p := l.p
	for _, h := range p.mapping(n, f, "a mapping of host name to variables", "write hosts as  name:  or  name: {ansible_host: ...}  (a list is not valid in a YAML inventory)") {
		l.hostEntry(name, h, join(f, h.key))
	}
}

// hostEntry decodes one host key (name, range, optionally :port) and its
// variables, and adds every named host to the group.
func (l *ansibleLoader) hostEntry(name string, h entry, hf string) {
	p := l.p
	s := &settings{}
	pattern, port, portStr := ansibleHostKey(h.key)
	if portStr != "" || port != 0 {
		if port < 1 || port > 65535 {
			p.c.add(h.kNode.Line, hf, "write host:port with a port in 1-65535, or use ansible_port", "port %q out of range 1-65535", portStr)
		} else {
			s.port.set(port)
		}
	}
	p.ansibleVars(h.value, hf, s, false)
	for _, hn := range p.hostNames(pattern, h.kNode.Line, hf) {
		rh := l.hosts.get(hn)
		if rh == nil {
			rh = &rawHost{name: hn, source: p.source(h.kNode.Line)}
			l.hosts.put(rh, h.kNode.Line)
		}
		rh.vars = append(rh.vars, s) // later mentions override earlier ones
		l.g.addHost(name, hn)
	}
}

// isVaulted reports an ansible-vault value: a !vault scalar in YAML, or
// {"__ansible_vault": ...} as ansible-inventory --list prints one it could
// not decrypt.
func isVaulted(n *yaml.Node) bool {
	n = located.Resolve(n)
	if n == nil {
		return false
	}
	if n.Tag == "!vault" {
		return true
	}
	return n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "__ansible_vault"
}
