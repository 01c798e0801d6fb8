package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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
