package inventory

import (
	"github.com/kaudit/kaudit/internal/located"
	"gopkg.in/yaml.v3"
)

// The JSON that `ansible-inventory -i SRC --list` (and every dynamic
// inventory script) prints:
//
//	{"_meta": {"hostvars": {"b1": {"ansible_host": "10.0.0.1"}}},
//	 "all": {"children": ["ungrouped", "kafka"]},
//	 "kafka": {"hosts": ["b1"], "vars": {...}, "children": [...]}}
//
// Ansible has already applied group_vars/, host_vars/ and vaults there, so
// kaudit reads nothing beside it.

// isAnsibleList reports whether root is that format: it has _meta, or a
// group whose hosts are a list (invalid in a YAML inventory).
func isAnsibleList(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "_meta" {
			return true
		}
		if v := located.Resolve(root.Content[i+1]); v != nil && v.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(v.Content); j += 2 {
				if v.Content[j].Value == "hosts" && located.Resolve(v.Content[j+1]).Kind == yaml.SequenceNode {
					return true
				}
			}
		}
	}
	return false
}

var listGroupKeys = []string{"hosts", "vars", "children"}

// parseAnsibleList reads the ansible-inventory --list format.
func (p *parser) parseAnsibleList(root *yaml.Node) (hostTable, *graph) {
	g := newGraph()
	g.add("all", 0)
	var hosts hostTable
	addHost := func(name string, line int, field string) {
		for _, hn := range p.hostNames(name, line, field) {
			if hosts.get(hn) == nil {
				hosts.put(&rawHost{name: hn, source: p.source(line)}, line)
			}
		}
	}
	var meta *yaml.Node
	for _, e := range p.entries(root, "") {
		if e.key == "_meta" {
			meta = e.value
			continue
		}
		p.listGroup(g, e, addHost)
	}
	p.listHostVars(meta, &hosts, g, addHost)
	g.adoptOrphans()
	g.findCycles(p)
	return hosts, g
}

func (p *parser) listGroup(g *graph, e entry, addHost func(string, int, string)) {
	if pr := checkGroup(e.key); pr != nil {
		p.c.add(e.kNode.Line, e.key, pr.hint, "%s", pr.msg)
		return
	}
	g.add(e.key, e.kNode.Line)
	if isNull(e.value) {
		return
	}
	if located.Resolve(e.value).Kind != yaml.MappingNode {
		p.wrongType(e.value, e.key, "a group (a mapping with hosts, vars or children)", "")
		return
	}
	for _, k := range p.entries(e.value, e.key) {
		f := join(e.key, k.key)
		switch k.key {
		case "hosts", "children":
			list := located.Resolve(k.value)
			if isNull(list) {
				continue
			}
			if list.Kind != yaml.SequenceNode {
				p.wrongType(k.value, f, "a list of names", "")
				continue
			}
			for i, item := range list.Content {
				name, ok := p.str(item, index(f, i))
				switch {
				case !ok:
				case k.key == "hosts":
					addHost(name, line(item), index(f, i))
					g.addHost(e.key, name)
				default:
					if pr := checkGroup(name); pr != nil {
						p.c.add(line(item), index(f, i), pr.hint, "%s", pr.msg)
						continue
					}
					g.add(name, line(item))
					g.addChild(e.key, name, ref{line(item), index(f, i)})
				}
			}
		case "vars":
			s := &settings{}
			if prio, ok := p.ansibleVars(k.value, f, s, true); ok {
				g.priority[e.key] = prio
			}
			g.addVars(e.key, s)
		default:
			p.c.add(k.kNode.Line, f, unknownHint(k.key, listGroupKeys), "unknown key %q in group %q", k.key, e.key)
		}
	}
}

// listHostVars reads _meta.hostvars; a host found only there is in "all".
func (p *parser) listHostVars(meta *yaml.Node, hosts *hostTable, g *graph, addHost func(string, int, string)) {
	if isNull(meta) {
		return
	}
	if located.Resolve(meta).Kind != yaml.MappingNode {
		p.wrongType(meta, "_meta", "a mapping with hostvars", "")
		return
	}
	for _, e := range p.entries(meta, "_meta") {
		if e.key != "hostvars" {
			continue // e.g. "profile" timings: not ours
		}
		if isNull(e.value) {
			continue
		}
		if located.Resolve(e.value).Kind != yaml.MappingNode {
			p.wrongType(e.value, "_meta.hostvars", "a mapping of host name to variables", "")
			continue
		}
		for _, h := range p.entries(e.value, "_meta.hostvars") {
			f := join("_meta.hostvars", h.key)
			s := &settings{}
			p.ansibleVars(h.value, f, s, false)
			if hosts.get(h.key) == nil {
				addHost(h.key, h.kNode.Line, f)
				g.addHost("all", h.key)
			}
			if rh := hosts.get(h.key); rh != nil {
				rh.vars = append(rh.vars, s)
			}
		}
	}
}
