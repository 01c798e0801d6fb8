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
	"syscall"

	"github.com/kaudit/kaudit/internal/located"
)

// Write renders into path atomically with mode perm, or, when path is an
// existing regular file, with that file's mode and owner: a report
// written over a 0600 file owned by a service account stays 0600 and
// its. When the owner cannot be kept (another user's file, kaudit not
// root), nothing is written; a group kaudit cannot give is left as the
// directory gives it. Errors of the file system say "cannot
// write PATH: ..."; an error of render is returned as it is.
func Write(path string, perm os.FileMode, render func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kaudit-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	defer os.Remove(f.Name())
	if err := keep(f, path, perm); err != nil {
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

// keep gives the temporary file f the mode and owner of the regular file
// at path, or mode perm when there is none.
func keep(f *os.File, path string, perm os.FileMode) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return f.Chmod(perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
		if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil && int(st.Uid) != os.Geteuid() {
			return located.Hint(fmt.Errorf("cannot write %s: it belongs to uid %d gid %d, and a new file would not (%v)", path, st.Uid, st.Gid, err),
				"write the report as that user, remove the file first, or give another path")
		}
	}
	return f.Chmod(fi.Mode().Perm())
}
