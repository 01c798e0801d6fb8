package discover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/internal/located"
)

// mapHint is what a user is told to do about a broker map file.
const mapHint = `a broker map is a YAML mapping of node id to inventory host name, e.g. "7: kafka-7"`

// hostName is an inventory host name a map may pin a node to.
var hostName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}$`)

// LoadMap reads a broker map file (--broker-map): node id → the inventory
// host that is that broker. Every error names the file and the line.
func LoadMap(path string) (map[int32]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, located.Hint(fmt.Errorf("--broker-map: %w", err), "give a YAML file: "+mapHint)
	}
	return ParseMap(path, data)
}

// ParseMap parses a broker map strictly: one mapping, each key a node id
// (0 to 2147483647) given once, each value a host name given once.
func ParseMap(name string, data []byte) (map[int32]string, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &located.Error{File: name, Msg: "empty", Hint: mapHint}
		}
		return nil, located.YAMLSyntax(name, data, err, mapHint)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &located.Error{File: name, Msg: "more than one YAML document", Hint: mapHint}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &located.Error{File: name, Line: root.Line, Msg: "not a mapping", Hint: mapHint}
	}
	out := map[int32]string{}
	nodeLine, hostLine := map[int32]int{}, map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		id, err := strconv.ParseInt(k.Value, 10, 32)
		if k.Kind != yaml.ScalarNode || err != nil || id < 0 {
			return nil, &located.Error{File: name, Line: k.Line, Msg: fmt.Sprintf("%q is not a node id (0 to 2147483647)", k.Value), Hint: mapHint}
		}
		if v.Kind != yaml.ScalarNode || !hostName.MatchString(v.Value) {
			return nil, &located.Error{File: name, Line: v.Line, Field: k.Value, Msg: fmt.Sprintf("%q is not a host name", v.Value), Hint: "give the host's name as the inventory names it"}
		}
		n := int32(id)
		if l, dup := nodeLine[n]; dup {
			return nil, &located.Error{File: name, Line: k.Line, Field: k.Value, Msg: fmt.Sprintf("node %d mapped twice (first at line %d)", n, l)}
		}
		if l, dup := hostLine[v.Value]; dup {
			return nil, &located.Error{File: name, Line: v.Line, Field: k.Value, Msg: fmt.Sprintf("host %s mapped to two nodes (first at line %d): a host is one broker", v.Value, l)}
		}
		nodeLine[n], hostLine[v.Value] = k.Line, v.Line
		out[n] = v.Value
	}
	return out, nil
}
