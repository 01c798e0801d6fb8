// Package atomicfile writes a file so that a reader never sees half of it:
// the content goes to a temporary file in the same directory, which is
// then synced and renamed over the destination (the directory synced too,
// best effort). A failed write leaves the previous file in place.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write renders into path atomically with mode perm. Errors of the file
// system say "cannot write PATH: ..."; an error of render is returned as
// it is.
func Write(path string, perm os.FileMode, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kaudit-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := render(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil { // make the rename durable; best effort
		d.Sync()
		d.Close()
	}
	return nil
}
