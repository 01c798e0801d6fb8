package discover

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMap(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     map[int32]string
		err      string
	}{
		{"two brokers", "# node id: host\n1: kafka-1\n7: kafka-7.internal\n", map[int32]string{1: "kafka-1", 7: "kafka-7.internal"}, ""},
		{"empty mapping", "{}\n", map[int32]string{}, ""},
		{"empty file", "", nil, "m.yaml: empty (hint: " + mapHint + ")"},
		{"a list", "- kafka-1\n", nil, "m.yaml:1: not a mapping (hint: " + mapHint + ")"},
		{"a name as key", "1: a\nkafka-2: b\n", nil, `m.yaml:2: "kafka-2" is not a node id (0 to 2147483647) (hint: ` + mapHint + ")"},
		{"negative id", "-1: a\n", nil, `m.yaml:1: "-1" is not a node id (0 to 2147483647) (hint: ` + mapHint + ")"},
		{"too large", "2147483648: a\n", nil, `m.yaml:1: "2147483648" is not a node id (0 to 2147483647) (hint: ` + mapHint + ")"},
		{"a list as host", "1: [a, b]\n", nil, `m.yaml:1: 1: "" is not a host name (hint: give the host's name as the inventory names it)`},
		{"a shell word as host", "1: 'a;b'\n", nil, `m.yaml:1: 1: "a;b" is not a host name (hint: give the host's name as the inventory names it)`},
		{"node twice", "1: a\n2: b\n1: c\n", nil, "m.yaml:3: 1: node 1 mapped twice (first at line 1)"},
		{"host twice", "1: a\n2: a\n", nil, "m.yaml:2: 2: host a mapped to two nodes (first at line 1): a host is one broker"},
		{"two documents", "1: a\n---\n2: b\n", nil, "m.yaml: more than one YAML document (hint: " + mapHint + ")"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMap("m.yaml", []byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseMap = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestLoadMapMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none.yaml")
	if _, err := LoadMap(p); err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Fatalf("missing file: %v", err)
	}
}
