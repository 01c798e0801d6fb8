package inventory

import (
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/suggest"
	"gopkg.in/yaml.v3"
)

// The keys of kaudit's own format.
var (
	hostKeys = []string{"address", "port", "user", "identity_files", "use_agent", "known_hosts",
		"host_key_policy", "proxy_jump", "become", "connect_timeout", "timeout", "connection",
		"kafka", "interfaces", "profile", "assume_kernel", "assume_kafka", "ssh_config", "rack"}
	kafkaKeys = []string{"port", "config", "home"}
	groupKeys = []string{"vars", "hosts", "children"}
)

type setter func(p *parser, s *settings, n *yaml.Node, field string)

var hostSetters = map[string]setter{
	"address":         (*parser).setAddress,
	"port":            (*parser).setSSHPort,
	"user":            (*parser).setUser,
	"identity_files":  (*parser).setIdentityFiles,
	"use_agent":       (*parser).setUseAgent,
	"ssh_config":      (*parser).setSSHConfig,
	"known_hosts":     (*parser).setKnownHosts,
	"host_key_policy": (*parser).setHostKeyPolicy,
	"proxy_jump":      (*parser).setProxyJump,
	"become":          (*parser).setBecome,
	"connect_timeout": func(p *parser, s *settings, n *yaml.Node, f string) { p.setDuration(&s.connectTimeout, n, f) },
	"timeout":         func(p *parser, s *settings, n *yaml.Node, f string) { p.setDuration(&s.timeout, n, f) },
	"connection":      (*parser).setConnection,
	"kafka":           (*parser).setKafka,
	"interfaces":      (*parser).setInterfaces,
	"profile":         (*parser).setProfile,
	"assume_kernel":   (*parser).setAssumeKernel,
	"assume_kafka":    (*parser).setAssumeKafka,
	"rack":            (*parser).setRack,
}

var kafkaSetters = map[string]setter{
	"port": func(p *parser, s *settings, n *yaml.Node, f string) {
		p.setPort(&s.kafkaPort, n, f, "the Kafka listener is usually 9092")
	},
	"config": func(p *parser, s *settings, n *yaml.Node, f string) { p.setRemotePath(&s.kafkaConfig, n, f) },
	"home":   func(p *parser, s *settings, n *yaml.Node, f string) { p.setRemotePath(&s.kafkaHome, n, f) },
}

// settingsMap decodes a mapping of host settings (defaults, group vars,
// a host entry). Null is an empty layer.
func (p *parser) settingsMap(n *yaml.Node, field string, setters map[string]setter, known []string, s *settings) {
	for _, e := range p.mapping(n, field, "a mapping of settings", "") {
		f := join(field, e.key)
		set, ok := setters[e.key]
		if !ok {
			p.c.add(e.kNode.Line, f, unknownHint(e.key, known), "unknown key %q", e.key)
			continue
		}
		set(p, s, e.value, f)
	}
}

func (p *parser) setKafka(s *settings, n *yaml.Node, field string) {
	p.settingsMap(n, field, kafkaSetters, kafkaKeys, s)
}

// rawHost is a host entry before its layers are merged.
type rawHost struct {
	name, source string
	group        string // own format: the group it is listed under, "" at top level
	vars         []*settings
}

// hostTable collects hosts in file order and rejects duplicates.
type hostTable struct {
	list   []*rawHost
	byName map[string]*rawHost
	line   map[string]int
}

func (t *hostTable) get(name string) *rawHost {
	if t.byName == nil {
		return nil
	}
	return t.byName[name]
}

func (t *hostTable) put(h *rawHost, line int) {
	if t.byName == nil {
		t.byName, t.line = map[string]*rawHost{}, map[string]int{}
	}
	t.byName[h.name] = h
	t.line[h.name] = line
	t.list = append(t.list, h)
}

// hostNames expands a host key (ranges) and validates every resulting name.
func (p *parser) hostNames(pattern string, line int, field string) []string {
	names, err := expandHosts(pattern)
	if err != nil {
		p.c.add(line, field, "ranges look like [01:10] (zero-padded), [1:10], [1:10:2] or [a:f]", "%v", err)
		return nil
	}
	var out []string
	for _, n := range names {
		if pr := checkHost("host name", n); pr != nil {
			p.c.add(line, field, pr.hint, "%s", pr.msg)
			continue
		}
		out = append(out, n)
	}
	return out
}

// childRef is a "children:" entry, resolved once every group is known.
type childRef struct {
	parent, child string
	r             ref
}

// kauditLoader holds what parseKaudit collects while it walks the file.
type kauditLoader struct {
	p         *parser
	g         *graph
	hosts     hostTable
	top, defs *settings
	childRefs []childRef
}

// parseKaudit reads kaudit's own format.
func (p *parser) parseKaudit(root *yaml.Node) ([]Host, *graph) {
	l := &kauditLoader{p: p, g: newGraph(), top: &settings{}, defs: &settings{}}
	for _, e := range p.entries(root, "") {
		l.topEntry(e)
	}
	l.resolveChildren()
	l.g.findCycles(p)
	return l.merge(), l.g
}

// topEntry decodes one top-level key.
func (l *kauditLoader) topEntry(e entry) {
	p := l.p
	switch e.key {
	case "defaults":
		p.settingsMap(e.value, "defaults", hostSetters, hostKeys, l.defs)
	case "profile":
		p.setProfile(l.top, e.value, "profile")
	case "clients_group":
		l.clientsGroup(e.value)
	case "hosts":
		l.addHosts(e.value, "hosts", "")
	case "groups":
		l.groups(e.value)
	default:
		p.c.add(e.kNode.Line, join("", e.key), unknownHint(e.key, kauditTopKeys), "unknown key %q", e.key)
	}
}

// clientsGroup decodes clients_group: the group whose hosts are clients.
func (l *kauditLoader) clientsGroup(n *yaml.Node) {
	p := l.p
	name, ok := p.str(n, "clients_group")
	if !ok {
		return
	}
	if pr := checkGroup(name); pr != nil {
		p.c.add(line(n), "clients_group", pr.hint, "%s", pr.msg)
		return
	}
	p.clientsGroup = name
}

// addHosts decodes a mapping of host name (or range) to settings, listed
// under group ("" at top level).
func (l *kauditLoader) addHosts(n *yaml.Node, field, group string) {
	p := l.p
	for _, e := range p.mapping(n, field, "a mapping of host name to settings", "write hosts as  name: {address: ...}  or  name: ~") {
		f := join(field, e.key)
		s := &settings{}
		p.settingsMap(e.value, f, hostSetters, hostKeys, s)
		for _, name := range p.hostNames(e.key, e.kNode.Line, f) {
			l.addHost(name, group, s, e.kNode.Line, f)
		}
	}
}

// addHost records one host, rejecting a name already defined.
func (l *kauditLoader) addHost(name, group string, s *settings, at int, field string) {
	p := l.p
	if first, dup := l.hosts.line[name]; dup {
		p.c.add(at, field, "host names must be unique; to put a host in several groups use children:",
			"duplicate host %q (first defined at line %d)", name, first)
		return
	}
	l.hosts.put(&rawHost{name: name, source: p.source(at), group: group, vars: []*settings{s}}, at)
	if group != "" {
		l.g.addHost(group, name)
	}
}

// groups decodes the groups: mapping of group name to group.
func (l *kauditLoader) groups(n *yaml.Node) {
	p := l.p
	for _, ge := range p.mapping(n, "groups", "a mapping of group name to group", "") {
		l.group(ge)
	}
}

// group decodes one group: its vars, hosts and children.
func (l *kauditLoader) group(ge entry) {
	p := l.p
	gf := join("groups", ge.key)
	if pr := checkGroup(ge.key); pr != nil {
		p.c.add(ge.kNode.Line, gf, pr.hint, "%s", pr.msg)
		return
	}
	l.g.add(ge.key, ge.kNode.Line)
	if isNull(ge.value) {
		return
	}
	if located.Resolve(ge.value).Kind != yaml.MappingNode {
		p.wrongType(ge.value, gf, "a group (a mapping with vars, hosts or children)", "")
		return
	}
	for _, k := range p.entries(ge.value, gf) {
		kf := join(gf, k.key)
		switch k.key {
		case "vars":
			s := &settings{}
			p.settingsMap(k.value, kf, hostSetters, hostKeys, s)
			l.g.addVars(ge.key, s)
		case "hosts":
			l.addHosts(k.value, kf, ge.key)
		case "children":
			l.children(ge.key, k.value, kf)
		default:
			p.c.add(k.kNode.Line, kf, unknownHint(k.key, groupKeys), "unknown key %q", k.key)
		}
	}
}

// children records a group's list of child group names for resolveChildren.
func (l *kauditLoader) children(parent string, n *yaml.Node, field string) {
	p := l.p
	if isNull(n) {
		return
	}
	list := located.Resolve(n)
	if list.Kind != yaml.SequenceNode {
		p.wrongType(n, field, "a list of group names", "")
		return
	}
	for i, c := range list.Content {
		if name, ok := p.str(c, index(field, i)); ok {
			l.childRefs = append(l.childRefs, childRef{parent, name, ref{line(c), index(field, i)}})
		}
	}
}

// resolveChildren links every child reference to a defined group.
func (l *kauditLoader) resolveChildren() {
	for _, c := range l.childRefs {
		if !l.g.has(c.child) {
			hint := "define it under groups:"
			if s := suggest.Closest(c.child, l.g.order); s != "" {
				hint = "did you mean \"" + s + "\"?"
			}
			l.p.c.add(c.r.line, c.r.field, hint, "unknown group %q", c.child)
			continue
		}
		l.g.addChild(c.parent, c.child, c.r)
	}
}

// merge layers each host's settings: the top-level profile, defaults:, the
// vars of its groups, then its own entry.
func (l *kauditLoader) merge() []Host {
	defaults := &settings{}
	defaults.overlay(l.top)
	defaults.overlay(l.defs)
	out := make([]Host, 0, len(l.hosts.list))
	for _, h := range l.hosts.list {
		s := &settings{}
		s.overlay(defaults)
		groups := l.g.groupsOf(h.name)
		for _, grp := range groups {
			s.overlay(l.g.vars[grp])
		}
		for _, v := range h.vars {
			s.overlay(v)
		}
		out = append(out, l.p.host(h.name, h.source, s, groups))
	}
	return out
}
