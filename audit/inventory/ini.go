package inventory

import (
	"bytes"
	"cmp"
	"errors"
	"regexp"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/words"
	"gopkg.in/yaml.v3"
)

// Ansible's INI inventory, as its ini plugin reads it:
//
//	host1 ansible_host=10.0.0.1          hosts before any section: in "all"
//	[kafka]                              a group: one host (or range) per line, key=value vars
//	broker[01:12].example.com ansible_user=kafka
//	[kafka:vars]                         group vars: key=value, one per line
//	ansible_become=true
//	[prod:children]                      child groups, one per line
//	kafka
//
// Lines starting with # or ; are comments; on a host line a token starting
// with # starts a comment. Host lines are split like a shell (quotes,
// backslashes). Values are read as Ansible reads them: 'quoted' and
// "quoted" strings, True/False, and lists or mappings in flow form
// (['eth0', 'eth1'], {'somaxconn': 8192}); anything else is a string.

var iniSectionRE = regexp.MustCompile(`^\[([^\]]*)\]\s*$`)

// iniState is the section an INI line belongs to.
type iniState struct {
	group string // "" before any section: hosts go to "all"
	kind  string // "hosts", "vars" or "children"
}

// parseINI reads an INI inventory into raw hosts and a group graph.
func (p *parser) parseINI(data []byte) (hostTable, *graph) {
	g := newGraph()
	g.add("all", 0)
	var hosts hostTable
	st := iniState{kind: "hosts"}
	for n, rest := 1, data; len(rest) > 0 || n == 1; n++ {
		var raw []byte
		raw, rest, _ = bytes.Cut(rest, []byte("\n"))
		if p.c.tooMany() {
			p.c.stoppedAt = n
			break
		}
		if len(raw) > maxLine {
			p.c.add(n, "", "an inventory line holds a host or a group and its variables", "line is %s bytes long (at most %s): is it an inventory?", words.Thousands(len(raw)), words.Thousands(maxLine))
			continue
		}
		line := strings.TrimSpace(strings.TrimSuffix(string(raw), "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if m := iniSectionRE.FindStringSubmatch(line); m != nil {
			st = p.iniSection(g, m[1], n)
			continue
		}
		if strings.HasPrefix(line, "[") && !strings.Contains(line, "]") {
			p.c.add(n, "", "a section header looks like [group], [group:vars] or [group:children]", "unterminated section header %q", clip(line))
			continue
		}
		switch st.kind {
		case "hosts":
			p.iniHost(g, &hosts, st.group, line, n)
		case "vars":
			p.iniGroupVar(g, st.group, line, n)
		case "children":
			p.iniChild(g, st.group, line, n)
		}
	}
	g.adoptOrphans()
	g.findCycles(p)
	return hosts, g
}

// iniSection starts a section; a bad header makes the lines under it skipped.
func (p *parser) iniSection(g *graph, header string, n int) iniState {
	name, kind, _ := strings.Cut(strings.TrimSpace(header), ":")
	switch kind {
	case "":
		kind = "hosts"
	case "vars", "children":
	default:
		p.c.add(n, "", "Ansible knows [group], [group:vars] and [group:children]", "unknown section type %q in [%s]", kind, clip(header))
		return iniState{kind: "skip"}
	}
	if pr := checkGroup(name); pr != nil {
		p.c.add(n, "", pr.hint, "%s", pr.msg)
		return iniState{kind: "skip"}
	}
	g.add(name, n)
	return iniState{group: name, kind: kind}
}

// iniHost reads "HOST[:PORT] [key=value ...]" into the group.
func (p *parser) iniHost(g *graph, hosts *hostTable, group, line string, n int) {
	toks, err := shellWords(line)
	if err != nil {
		p.c.add(n, "", "close the quote, or escape it with a backslash", "%v", err)
		return
	}
	if len(toks) == 0 {
		return
	}
	s := &settings{}
	pattern, port, portStr := ansibleHostKey(toks[0])
	if portStr != "" || port != 0 {
		if port < 1 || port > 65535 {
			p.c.add(n, toks[0], "write host:port with a port in 1-65535, or use ansible_port", "port %q out of range 1-65535", portStr)
		} else {
			s.port.set(port)
		}
	}
	for _, t := range toks[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			p.c.add(n, toks[0], "host variables are written key=value, with no spaces around =; quote values that contain spaces", "expected key=value, got %q", clip(t))
			continue
		}
		p.iniVar(s, k, v, n, false)
	}
	names := p.hostNames(pattern, n, toks[0])
	group = cmp.Or(group, "all")
	for _, hn := range names {
		rh := hosts.get(hn)
		if rh == nil {
			rh = &rawHost{name: hn, source: p.source(n)}
			hosts.put(rh, n)
		}
		rh.vars = append(rh.vars, s)
		g.addHost(group, hn)
	}
}

func (p *parser) iniGroupVar(g *graph, group, line string, n int) {
	k, v, ok := strings.Cut(line, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t") {
		p.c.add(n, "["+group+":vars]", "group variables are written key=value, one per line", "expected key=value, got %q", clip(line))
		return
	}
	s := &settings{}
	if prio, ok := p.iniVar(s, k, strings.TrimSpace(v), n, true); ok {
		g.priority[group] = prio
	}
	g.addVars(group, s)
}

func (p *parser) iniChild(g *graph, group, line string, n int) {
	name := strings.Fields(line)[0]
	if pr := checkGroup(name); pr != nil {
		p.c.add(n, "["+group+":children]", pr.hint, "%s", pr.msg)
		return
	}
	g.add(name, n) // Ansible creates a child group that has no section of its own
	g.addChild(group, name, ref{n, "[" + group + ":children]"})
}

// iniVar applies one variable given as INI text.
func (p *parser) iniVar(s *settings, key, value string, n int, isGroup bool) (priority int, hasPriority bool) {
	node, err := iniValue(value, n)
	if err != nil {
		p.c.add(n, key, "write lists as ['a', 'b'] and mappings as {'key': value}", "invalid value %q: %v", clip(value), err)
		return 0, false
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Line: n, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: n}, node}}
	return p.ansibleVars(m, "", s, isGroup)
}

// iniValue turns an INI value into a YAML node on line n, as Ansible's
// ast.literal_eval would read it.
func iniValue(v string, n int) (*yaml.Node, error) {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Line: n} }
	switch {
	case v == "True" || v == "False":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strings.ToLower(v), Line: n}, nil
	case v == "None":
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "", Line: n}, nil
	case len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0]:
		return str(v[1 : len(v)-1]), nil
	case strings.Contains(v, "{{") || strings.Contains(v, "{%"):
		return str(v), nil // a Jinja template: the setter says kaudit does not evaluate it
	case strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{"):
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
			_, msg := located.YAMLLine(err)
			return nil, errors.New(msg)
		}
		if len(doc.Content) != 1 {
			return str(v), nil
		}
		setLines(doc.Content[0], n)
		return doc.Content[0], nil
	}
	return str(v), nil
}

func setLines(n *yaml.Node, line int) {
	n.Line = line
	for _, c := range n.Content {
		setLines(c, line)
	}
}

// adoptOrphans makes every group without a parent a child of "all", as
// Ansible does.
func (g *graph) adoptOrphans() {
	for _, name := range g.order {
		if name != "all" && len(g.parents(name)) == 0 {
			g.addChild("all", name, ref{g.line[name], name})
		}
	}
}

// shellWords splits a line as Python's shlex.split(line, comments=True)
// does: whitespace separates words, 'single' quotes are literal, "double"
// quotes allow \" and \\, a backslash outside quotes escapes the next
// character, and a word starting with # starts a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			continue
		case c == '#' && !inWord:
			return words, nil
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != c; j++ {
				if c == '"' && line[j] == '\\' && j+1 < len(line) && (line[j+1] == '"' || line[j+1] == '\\') {
					j++
				}
				cur.WriteByte(line[j])
			}
			if j >= len(line) {
				return nil, errors.New("unterminated quote " + string(c))
			}
			i = j
		default:
			cur.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// clip shortens a value quoted in a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
