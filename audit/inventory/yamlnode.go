package inventory

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/located"
	"gopkg.in/yaml.v3"
)

// entry is one key/value pair of a YAML mapping.
type entry struct {
	key   string
	kNode *yaml.Node
	value *yaml.Node
}

func isNull(n *yaml.Node) bool {
	n = located.Resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// mapping is entries of n when n is a mapping; nothing when it is null;
// and nothing, with a wrong-type problem saying want and hint, otherwise.
func (p *parser) mapping(n *yaml.Node, field, want, hint string) []entry {
	if isNull(n) {
		return nil
	}
	if located.Resolve(n).Kind != yaml.MappingNode {
		p.wrongType(n, field, want, hint)
		return nil
	}
	return p.entries(n, field)
}

// entries lists a mapping's pairs in file order, expanding YAML merge keys
// ("<<: *base"; explicit keys win over merged ones) and reporting duplicate
// keys. A node that is not a mapping yields nil.
func (p *parser) entries(n *yaml.Node, field string) []entry {
	return p.mergedEntries(n, field, map[*yaml.Node]bool{})
}

func (p *parser) mergedEntries(n *yaml.Node, field string, visiting map[*yaml.Node]bool) []entry {
	n = located.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	if visiting[n] {
		p.c.add(n.Line, field, "a mapping cannot merge itself (<<: *anchor inside that anchor)", "merge key refers back to its own mapping")
		return nil
	}
	visiting[n] = true
	defer delete(visiting, n)
	var merged, own []entry
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			srcs := []*yaml.Node{located.Resolve(v)}
			if srcs[0] != nil && srcs[0].Kind == yaml.SequenceNode {
				srcs = srcs[0].Content
			}
			for _, s := range srcs {
				if s = located.Resolve(s); s == nil || s.Kind != yaml.MappingNode {
					p.c.add(k.Line, field, "a merge key (<<) takes an alias of a mapping, like <<: *defaults", "invalid merge key: expected a mapping, got %s", located.DescribeNode(s))
					continue
				}
				merged = append(merged, p.mergedEntries(s, field, visiting)...)
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			p.c.add(k.Line, field, "", "keys must be plain strings, got %s", located.DescribeNode(k))
			continue
		}
		if line, dup := first[k.Value]; dup {
			p.c.add(k.Line, join(field, k.Value), "remove one of them or rename it", "duplicate key %q (first defined at line %d)", k.Value, line)
			continue
		}
		first[k.Value] = k.Line
		own = append(own, entry{key: k.Value, kNode: k, value: v})
	}
	if len(merged) == 0 {
		return own
	}
	out := make([]entry, 0, len(merged)+len(own))
	seen := map[string]bool{}
	for _, e := range own {
		seen[e.key] = true
	}
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			out = append(out, e)
		}
	}
	return append(out, own...)
}

// join builds a dotted field path.
func join(parent string, parts ...string) string {
	var b strings.Builder
	b.WriteString(parent)
	for _, p := range parts {
		if b.Len() > 0 && !isIndex(p) {
			b.WriteByte('.')
		}
		if strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' }) >= 0 {
			p = strconv.Quote(p) // keep the message on one line
		}
		b.WriteString(p)
	}
	return b.String()
}

func isIndex(p string) bool {
	return len(p) > 2 && p[0] == '[' && p[len(p)-1] == ']' && strings.Trim(p[1:len(p)-1], "0123456789") == ""
}

// index formats a list element's field path.
func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }
