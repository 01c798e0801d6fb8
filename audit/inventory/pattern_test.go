package inventory

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/internal/suggest"
)

func TestExpandHosts(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"broker-1", []string{"broker-1"}, ""},
		{"broker[01:03].example.com", []string{"broker01.example.com", "broker02.example.com", "broker03.example.com"}, ""},
		{"broker[8:11]", []string{"broker8", "broker9", "broker10", "broker11"}, ""},
		{"broker[008:010]", []string{"broker008", "broker009", "broker010"}, ""},
		{"b[1:9:4]", []string{"b1", "b5", "b9"}, ""},
		{"b[:2]", []string{"b0", "b1", "b2"}, ""},
		{"node-[a:c]", []string{"node-a", "node-b", "node-c"}, ""},
		{"node-[x:B]", []string{"node-x", "node-y", "node-z", "node-A", "node-B"}, ""},
		{"r[1:2]-n[a:b]", []string{"r1-na", "r1-nb", "r2-na", "r2-nb"}, ""},
		{"[2001:db8::1]", []string{"[2001:db8::1]"}, ""},
		{"b[1:2", nil, `missing ']' in host pattern "b[1:2"`},
		{"b1]", nil, `unbalanced ']' in host pattern "b1]"`},
		{"b[2:1]", nil, "range [2:1] starts after it ends"},
		{"b[1]", nil, "range [1] must be [start:end] or [start:end:step]"},
		{"b[1:]", nil, "range [1:] has no end"},
		{"b[01:9]", nil, "zero-padded start and end must have the same width"},
		{"b[a:9]", nil, "must be numeric ([01:10]) or single letters ([a:f])"},
		{"b[aa:bb]", nil, "must be numeric"},
		{"b[-1:3]", nil, "must be numeric"},
		{"b[1:3:0]", nil, `step "0" must be a positive integer`},
		{"b[0:99999]", nil, "expands to more than 10000 hosts"},
		{"b[0:999][0:999]", nil, "expands to more than 10000 hosts"},
	}
	for _, tt := range tests {
		got, err := expandHosts(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expandHosts(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("expandHosts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestAnsibleHostKey(t *testing.T) {
	tests := []struct {
		in, pattern string
		port        int
	}{
		{"db1", "db1", 0},
		{"db1:2222", "db1", 2222},
		{"db[1:3]:2222", "db[1:3]", 2222},
		{"db[1:3]", "db[1:3]", 0},
		{"fe80::1", "fe80::1", 0},
		{"[2001:db8::1]:22", "[2001:db8::1]", 22},
		{"db1:ssh", "db1", -1},
	}
	for _, tt := range tests {
		pattern, port, _ := ansibleHostKey(tt.in)
		if pattern != tt.pattern || port != tt.port {
			t.Errorf("ansibleHostKey(%q) = %q, %d; want %q, %d", tt.in, pattern, port, tt.pattern, tt.port)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"prot", "port"},
		{"adress", "address"},
		{"identity_file", "identity_files"},
		{"hostkeypolicy", "host_key_policy"},
		{"PORT", "port"},
		{"zzzzzz", ""},
	}
	for _, tt := range tests {
		if got := suggest.Closest(tt.in, hostKeys); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
