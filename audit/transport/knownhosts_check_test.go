package transport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckKnownHostsPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"file", file, ""},
		{"missing", filepath.Join(dir, "none"), ""},
		{"unexpanded ~", "~/.ssh/known_hosts", ""},
		{"directory", dir, "known_hosts " + dir + ": is a directory, not a file (hint: give known_hosts the path of a file in it, e.g. " + dir + "/known_hosts)"},
		{"under a file", file + "/x", "known_hosts " + file + "/x: cannot be read: not a directory (hint: give known_hosts the path of a readable file, e.g. ~/.ssh/known_hosts)"},
		{"device", "/dev/null", "known_hosts /dev/null: is not a regular file (hint: give known_hosts the path of a file, e.g. ~/.ssh/known_hosts)"},
	}
	for _, tc := range cases {
		err := CheckKnownHostsPath(tc.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		if err := os.WriteFile(locked, nil, 0o000); err != nil {
			t.Fatal(err)
		}
		if err := CheckKnownHostsPath(locked); err == nil || !strings.Contains(err.Error(), "cannot be read: permission denied (check its permissions") {
			t.Errorf("unreadable: %v", err)
		}
	}
}
