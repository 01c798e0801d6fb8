package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kaudit/kaudit/internal/located"
)

// Profile holds the thresholds rules compare against. The defaults ship in
// profile.default.yaml (one Kafka network tuning guide's values); users
// override keys with LoadProfile or per host with With. Key names are the
// YAML names below.
type Profile struct {
	Somaxconn         int      `json:"somaxconn"`          // net.core.somaxconn >=
	ListenBacklog     int      `json:"listen_backlog"`     // socket.listen.backlog.size and the listener's Send-Q >=
	CongestionControl string   `json:"congestion_control"` // net.ipv4.tcp_congestion_control ==
	DefaultQdisc      string   `json:"default_qdisc"`      // net.core.default_qdisc ==
	NICRing           int      `json:"nic_ring"`           // rx/tx ring entries >= (capped at the NIC maximum)
	Offloads          []string `json:"offloads"`           // ethtool -k short names that must be on
	StormMargin       int      `json:"storm_margin"`       // reconnect-storm: percent above the effective backlog that is a warning, not a failure
	NoFile            int      `json:"nofile"`             // broker-open-files: the broker process's soft "Max open files" >=
	MaxMapCount       int      `json:"max_map_count"`      // broker-map-count: vm.max_map_count >= (a warning below it while the maps fit)

	// extra holds the keys only catalog checks read (rmem_max,
	// tcp_rmem_max, …: declared by a check's profile:), by name: int,
	// string or []string. No Go reads them, so none needs a field.
	extra map[string]any
	// keys is the key table of the catalog the profile belongs to (nil:
	// the shipped one).
	keys *keyTable
}

type keyKind int

const (
	kindInt keyKind = iota
	kindString
	kindList
)

func (k keyKind) String() string {
	return [...]string{"a positive integer", "a string", "a list of strings"}[k]
}

type profileKey struct {
	kind keyKind
	ints func(*Profile) *int
	str  func(*Profile) *string
	list func(*Profile) *[]string
	// dyn: a key declared by a catalog check, its value in Profile.extra.
	dyn  bool
	name string
}

// staticKeys are the profile keys Go reasoning rules read, each a field of
// Profile. Every other key is declared by a catalog check (keyTable).
var staticKeys = map[string]profileKey{
	"somaxconn":          {kind: kindInt, ints: func(p *Profile) *int { return &p.Somaxconn }},
	"listen_backlog":     {kind: kindInt, ints: func(p *Profile) *int { return &p.ListenBacklog }},
	"congestion_control": {kind: kindString, str: func(p *Profile) *string { return &p.CongestionControl }},
	"default_qdisc":      {kind: kindString, str: func(p *Profile) *string { return &p.DefaultQdisc }},
	"nic_ring":           {kind: kindInt, ints: func(p *Profile) *int { return &p.NICRing }},
	"offloads":           {kind: kindList, list: func(p *Profile) *[]string { return &p.Offloads }},
	"storm_margin":       {kind: kindInt, ints: func(p *Profile) *int { return &p.StormMargin }},
	"nofile":             {kind: kindInt, ints: func(p *Profile) *int { return &p.NoFile }},
	"max_map_count":      {kind: kindInt, ints: func(p *Profile) *int { return &p.MaxMapCount }},
}

// keyTable is the closed set of profile keys of one catalog: the static
// ones and those its checks declare.
type keyTable struct {
	static map[string]profileKey
	all    map[string]profileKey
	names  []string // sorted
}

func newKeyTable() *keyTable {
	t := &keyTable{static: staticKeys, all: map[string]profileKey{}}
	for k, v := range staticKeys {
		t.all[k] = v
	}
	t.sort()
	return t
}

func (t *keyTable) declare(name string, kind keyKind) {
	if _, ok := t.all[name]; !ok {
		t.all[name] = profileKey{kind: kind, dyn: true, name: name}
		t.sort()
	}
}

func (t *keyTable) sort() {
	t.names = sortedKeys(t.all)
}

func (p Profile) table() *keyTable {
	if p.keys != nil {
		return p.keys
	}
	return shipped.keys
}

func (p Profile) key(name string) (profileKey, bool) {
	k, ok := p.table().all[name]
	return k, ok
}

func (p Profile) keyNames() []string { return p.table().names }

// ProfileKeys lists the profile key names, sorted.
func ProfileKeys() []string { return append([]string(nil), shipped.keys.names...) }

// DefaultProfile returns the shipped profile (profile.default.yaml).
func DefaultProfile() Profile { return defProf.clone() }

func (p Profile) clone() Profile {
	p.Offloads = append([]string(nil), p.Offloads...)
	extra := make(map[string]any, len(p.extra))
	for k, v := range p.extra {
		if l, ok := v.([]string); ok {
			v = append([]string(nil), l...)
		}
		extra[k] = v
	}
	p.extra = extra
	return p
}

// LoadProfile reads a profile file: it starts from DefaultProfile and
// overrides the keys the file sets. Every error is a *located.Error: a
// file that cannot be read or is not YAML (with a hint saying what to
// give), an unknown key, a key set twice or a value of the wrong type
// (naming file:line and the key).
func LoadProfile(path string) (Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, &located.Error{File: path, Msg: fmt.Sprintf("cannot read the thresholds file: %v", located.PathCause(err)), Hint: profileHint}
	}
	return parseProfile(path, data, DefaultProfile(), false)
}

// With returns a copy of p with overrides applied, for per-host inventory
// values. Keys are the profile's YAML names; integers may be given as Go
// integers, integral floats or decimal strings, offloads as a list of strings.
func (p Profile) With(overrides map[string]any) (Profile, error) {
	out := p.clone()
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		key, ok := p.key(name)
		if !ok {
			return p, fmt.Errorf("profile override %q: unknown key (known: %s)", name, strings.Join(p.keyNames(), ", "))
		}
		if err := key.setAny(&out, overrides[name]); err != nil {
			return p, fmt.Errorf("profile override %q: %w", name, err)
		}
	}
	return out, nil
}

// profileHint says what a thresholds file is.
const profileHint = "give a YAML file of thresholds, keys as in rules/profile.default.yaml; kaudit explain RULE shows a rule's"

var wordRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// parseProfile applies the keys of one YAML mapping onto base. The default
// profile (requireAll) must set every key.
func parseProfile(name string, data []byte, base Profile, requireAll bool) (Profile, error) {
	out := base.clone()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // empty file: nothing overridden
			if requireAll {
				return out, &located.Error{File: name, Msg: "empty"}
			}
			return out, nil
		}
		return out, located.YAMLSyntax(name, data, err, profileHint)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return out, &located.Error{File: name, Msg: "more than one YAML document"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return out, nil
	}
	if root.Kind != yaml.MappingNode {
		return out, &located.Error{File: name, Line: root.Line, Msg: "a profile is a mapping of key: value"}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		kn, vn := root.Content[i], root.Content[i+1]
		key, ok := out.key(kn.Value)
		if !ok {
			return out, &located.Error{File: name, Line: kn.Line, Msg: fmt.Sprintf("unknown profile key %q (known: %s)", kn.Value, strings.Join(out.keyNames(), ", "))}
		}
		if prev, dup := seen[kn.Value]; dup {
			return out, &located.Error{File: name, Line: kn.Line, Msg: fmt.Sprintf("profile key %q set twice (first at line %d)", kn.Value, prev)}
		}
		seen[kn.Value] = kn.Line
		if err := key.setNode(&out, vn); err != nil {
			return out, &located.Error{File: name, Line: vn.Line, Msg: fmt.Sprintf("profile key %q: %v", kn.Value, err)}
		}
	}
	if requireAll {
		for _, k := range out.keyNames() {
			if _, ok := seen[k]; !ok {
				return out, &located.Error{File: name, Msg: fmt.Sprintf("missing profile key %q", k)}
			}
		}
	}
	return out, nil
}

func (k profileKey) setNode(p *Profile, n *yaml.Node) error {
	switch k.kind {
	case kindInt:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return fmt.Errorf("want %s, got %s", k.kind, located.DescribeNode(n))
		}
		var v int
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("want %s, got %q", k.kind, n.Value)
		}
		return k.setInt(p, v)
	case kindString:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && !(k.dyn && n.Tag == "!!int")) {
			return fmt.Errorf("want %s, got %s", k.kind, located.DescribeNode(n))
		}
		return k.setString(p, n.Value)
	default:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("want %s, got %s", k.kind, located.DescribeNode(n))
		}
		var vs []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag != "!!str" {
				return fmt.Errorf("want %s, got %s in the list", k.kind, located.DescribeNode(c))
			}
			vs = append(vs, c.Value)
		}
		return k.setList(p, vs)
	}
}

func (k profileKey) setAny(p *Profile, v any) error {
	switch k.kind {
	case kindInt:
		n, ok := anyInt(v)
		if !ok {
			return fmt.Errorf("want %s, got %T %v", k.kind, v, v)
		}
		return k.setInt(p, n)
	case kindString:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want %s, got %T %v", k.kind, v, v)
		}
		return k.setString(p, s)
	default:
		var vs []string
		switch l := v.(type) {
		case []string:
			vs = l
		case []any:
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return fmt.Errorf("want %s, got an item %T %v", k.kind, e, e)
				}
				vs = append(vs, s)
			}
		default:
			return fmt.Errorf("want %s, got %T %v", k.kind, v, v)
		}
		return k.setList(p, vs)
	}
}

func anyInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case uint:
		return int(n), uint64(n) <= math.MaxInt
	case uint32:
		return int(n), true
	case uint64:
		return int(n), n <= math.MaxInt
	case float64:
		return int(n), n == math.Trunc(n) && math.Abs(n) < 1<<53
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		return i, err == nil
	}
	return 0, false
}

func (k profileKey) setInt(p *Profile, v int) error {
	if k.dyn && v >= 0 { // a check's target may be 0 (vm.swappiness at most 0)
		p.extra[k.name] = v
		return nil
	}
	if v <= 0 {
		return fmt.Errorf("want %s, got %d", k.kind, v)
	}
	if k.dyn {
		p.extra[k.name] = v
		return nil
	}
	*k.ints(p) = v
	return nil
}

func (k profileKey) setString(p *Profile, s string) error {
	if !wordRE.MatchString(s) {
		return fmt.Errorf("want a name like %q, got %q", "bbr", s)
	}
	if k.dyn {
		p.extra[k.name] = s
		return nil
	}
	*k.str(p) = s
	return nil
}

func (k profileKey) setList(p *Profile, vs []string) error {
	seen := map[string]bool{}
	out := make([]string, 0, len(vs))
	for _, s := range vs {
		if !wordRE.MatchString(s) {
			return fmt.Errorf("want ethtool feature names like %q, got %q", "gro", s)
		}
		if !seen[s] {
			out = append(out, s)
			seen[s] = true
		}
	}
	if k.dyn {
		p.extra[k.name] = out
		return nil
	}
	*k.list(p) = out
	return nil
}

// Value returns the value of a profile key (nil for an unknown key), for
// display in `kaudit explain`.
func (p Profile) Value(key string) any {
	k, ok := p.key(key)
	if !ok {
		return nil
	}
	if k.dyn {
		v := p.extra[key]
		if l, ok := v.([]string); ok {
			return append([]string(nil), l...)
		}
		return v
	}
	switch k.kind {
	case kindInt:
		return *k.ints(&p)
	case kindString:
		return *k.str(&p)
	default:
		return append([]string(nil), *k.list(&p)...)
	}
}
