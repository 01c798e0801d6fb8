package located

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// DescribeNode names what a user wrote where something else was expected,
// for "expected X, got DESCRIPTION": "a mapping", "a list", "nothing",
// "null", "the integer 5", `the string "x"`. It follows aliases; long
// values are cut at 40 bytes.
func DescribeNode(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "the boolean " + v
	case "!!int":
		return "the integer " + v
	case "!!float":
		return "the number " + v
	}
	return fmt.Sprintf("the string %q", v)
}

// Resolve follows aliases (*anchor) to the node they name; nil for a
// chain longer than 100.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i == 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}
