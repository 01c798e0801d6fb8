package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that no input panics, and that every error is an *Error
// on one line with a file name.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: &x\n  <<: *x\n"))
	f.Add([]byte("all:\n  children:\n    a: &g\n      children:\n        b: *g\n"))
	f.Add([]byte("hosts:\n  b1: {profile: {1: 2, [a]: b}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		t.Setenv("HOME", "/nonexistent-kaudit-home")
		inv, err := Parse("f.yaml", data)
		if err == nil {
			if inv == nil || len(inv.Hosts) == 0 {
				t.Fatalf("nil error but no hosts")
			}
			for _, h := range inv.Hosts {
				for _, v := range []string{h.Name, h.Address, h.User, h.ProxyJump, h.KafkaConfig, h.KafkaHome} {
					if strings.ContainsAny(v, ";$`'\"\\|&<>\n\x00 ") {
						t.Fatalf("host %q: unsafe value %q accepted", h.Name, v)
					}
				}
			}
			return
		}
		for _, e := range Errors(err) {
			if e.File != "f.yaml" || strings.Contains(e.Error(), "\n") {
				t.Fatalf("bad error %q", e.Error())
			}
		}
		if len(Errors(err)) == 0 {
			t.Fatalf("error is not an *Error: %v", err)
		}
	})
}
