package inventory

import (
	"gopkg.in/yaml.v3"
)

// The keys of kaudit's own format.
var (
	hostKeys = []string{"address", "port", "user", "identity_files", "use_agent", "known_hosts",
		"host_key_policy", "proxy_jump", "become", "connect_timeout", "timeout", "connection",
		"kafka", "interfaces", "profile", "assume_kernel", "assume_kafka", "ssh_config"}
	kafkaKeys = []string{"port", "config", "home"}
	groupKeys = []string{"vars", "hosts", "children"}
)

type setter func(p *parser, s *settings, n *yaml.Node, field string)

var hostSetters = map[string]setter{
	"address": (*parser).setAddress,
	"port": func(p *parser, s *settings, n *yaml.Node, f string) {
		p.setPort(&s.port, n, f, "SSH listens on 22 unless configured otherwise")
	},
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
	if isNull(n) {
		return
	}
	if resolve(n).Kind != yaml.MappingNode {
		p.wrongType(n, field, "a mapping of settings", "")
		return
	}
	for _, e := range p.entries(n, field) {
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

// parseKaudit reads kaudit's own format.
func (p *parser) parseKaudit(root *yaml.Node) ([]Host, *graph) {
	g := newGraph()
	var hosts hostTable
	defaults := &settings{}
	var top, defs *settings = &settings{}, &settings{}
	var childRefs []struct {
		parent, child string
		r             ref
	}

	addHosts := func(n *yaml.Node, field, group string) {
		if isNull(n) {
			return
		}
		if resolve(n).Kind != yaml.MappingNode {
			p.wrongType(n, field, "a mapping of host name to settings", "write hosts as  name: {address: ...}  or  name: ~")
			return
		}
		for _, e := range p.entries(n, field) {
			f := join(field, e.key)
			s := &settings{}
			p.settingsMap(e.value, f, hostSetters, hostKeys, s)
			for _, name := range p.hostNames(e.key, e.kNode.Line, f) {
				if line, dup := hosts.line[name]; dup {
					p.c.add(e.kNode.Line, f, "host names must be unique; to put a host in several groups use children:",
						"duplicate host %q (first defined at line %d)", name, line)
					continue
				}
				hosts.put(&rawHost{name: name, source: p.source(e.kNode.Line), group: group, vars: []*settings{s}}, e.kNode.Line)
				if group != "" {
					g.addHost(group, name)
				}
			}
		}
	}

	for _, e := range p.entries(root, "") {
		switch e.key {
		case "defaults":
			p.settingsMap(e.value, "defaults", hostSetters, hostKeys, defs)
		case "profile":
			p.setProfile(top, e.value, "profile")
		case "clients_group":
			if name, ok := p.str(e.value, "clients_group"); ok {
				if pr := checkGroup(name); pr != nil {
					p.c.add(line(e.value), "clients_group", pr.hint, "%s", pr.msg)
				} else {
					p.clientsGroup = name
				}
			}
		case "hosts":
			addHosts(e.value, "hosts", "")
		case "groups":
			if isNull(e.value) {
				continue
			}
			if resolve(e.value).Kind != yaml.MappingNode {
				p.wrongType(e.value, "groups", "a mapping of group name to group", "")
				continue
			}
			for _, ge := range p.entries(e.value, "groups") {
				gf := join("groups", ge.key)
				if pr := checkGroup(ge.key); pr != nil {
					p.c.add(ge.kNode.Line, gf, pr.hint, "%s", pr.msg)
					continue
				}
				g.add(ge.key, ge.kNode.Line)
				if isNull(ge.value) {
					continue
				}
				if resolve(ge.value).Kind != yaml.MappingNode {
					p.wrongType(ge.value, gf, "a group (a mapping with vars, hosts or children)", "")
					continue
				}
				for _, k := range p.entries(ge.value, gf) {
					kf := join(gf, k.key)
					switch k.key {
					case "vars":
						s := &settings{}
						p.settingsMap(k.value, kf, hostSetters, hostKeys, s)
						g.addVars(ge.key, s)
					case "hosts":
						addHosts(k.value, kf, ge.key)
					case "children":
						if isNull(k.value) {
							continue
						}
						list := resolve(k.value)
						if list.Kind != yaml.SequenceNode {
							p.wrongType(k.value, kf, "a list of group names", "")
							continue
						}
						for i, c := range list.Content {
							if name, ok := p.str(c, index(kf, i)); ok {
								childRefs = append(childRefs, struct {
									parent, child string
									r             ref
								}{ge.key, name, ref{line(c), index(kf, i)}})
							}
						}
					default:
						p.c.add(k.kNode.Line, kf, unknownHint(k.key, groupKeys), "unknown key %q", k.key)
					}
				}
			}
		default:
			p.c.add(e.kNode.Line, join("", e.key), unknownHint(e.key, kauditTopKeys), "unknown key %q", e.key)
		}
	}

	for _, c := range childRefs {
		if !g.has(c.child) {
			hint := "define it under groups:"
			if s := closest(c.child, g.order); s != "" {
				hint = "did you mean \"" + s + "\"?"
			}
			p.c.add(c.r.line, c.r.field, hint, "unknown group %q", c.child)
			continue
		}
		g.addChild(c.parent, c.child, c.r)
	}
	g.findCycles(p)

	defaults.overlay(top)
	defaults.overlay(defs)
	out := make([]Host, 0, len(hosts.list))
	for _, h := range hosts.list {
		s := &settings{}
		s.overlay(defaults)
		groups := g.groupsOf(h.name)
		for _, grp := range groups {
			s.overlay(g.vars[grp])
		}
		for _, v := range h.vars {
			s.overlay(v)
		}
		out = append(out, p.host(h.name, h.source, s, groups))
	}
	return out, g
}
