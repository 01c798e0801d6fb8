package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if err != boom {
		t.Errorf("render error %v, want it unchanged", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("a failed render replaced the file: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	err = Write(filepath.Join(dir, "no", "x"), 0o644, func(io.Writer) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "cannot write "+filepath.Join(dir, "no", "x")+": ") {
		t.Errorf("missing directory: %v", err)
	}
}

// TestWriteKeepsModeAndOwner: a file written over an existing one keeps
// its mode (a 0600 report stays 0600) and, as root, its owner; a new file
// gets perm.
func TestWriteKeepsModeAndOwner(t *testing.T) {
	dir := t.TempDir()
	write := func(path string) {
		t.Helper()
		if err := Write(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o640, 0o664} {
		path := filepath.Join(dir, fmt.Sprintf("report-%o.json", mode))
		if err := os.WriteFile(path, []byte("old"), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		write(path)
		if fi, _ := os.Stat(path); fi.Mode().Perm() != mode {
			t.Errorf("%o over an existing file: now %o", mode, fi.Mode().Perm())
		}
	}
	fresh := filepath.Join(dir, "fresh.json")
	write(fresh)
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o644 {
		t.Errorf("a new file: %o, want 0644", fi.Mode().Perm())
	}
	if os.Geteuid() != 0 {
		t.Skip("keeping another user's ownership needs root")
	}
	owned := filepath.Join(dir, "owned.json")
	if err := os.WriteFile(owned, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, 4242, 4343); err != nil {
		t.Fatal(err)
	}
	write(owned)
	fi, _ := os.Stat(owned)
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4343 || fi.Mode().Perm() != 0o600 {
		t.Errorf("owner %d:%d mode %o, want 4242:4343 0600", st.Uid, st.Gid, fi.Mode().Perm())
	}
}
