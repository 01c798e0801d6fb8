package sshconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzResolve: any file either fails with an error or resolves; it never
// panics or loops (go test -fuzz FuzzResolve ./audit/sshconfig/).
func FuzzResolve(f *testing.F) {
	for _, c := range resolveCases {
		f.Add(c.conf, "web1")
	}
	f.Add("Match final all\n Include /nonexistent/*.conf\n", "x")
	f.Add("Host *\n IdentityFile %d/%h/${HOME}\n", "a")
	f.Fuzz(func(t *testing.T, conf, host string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "config")
		if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(Options{File: p, Home: dir, LocalUser: "me"})
		if err != nil {
			return
		}
		_, _ = c.Resolve(Query{Host: host})
	})
}
