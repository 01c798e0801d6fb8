package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeOutput renders to stdout, or to path atomically (temp file in the
// same directory, then rename), so a reader never sees half a report and a
// failed render leaves the previous file in place. Files are 0644: reports
// are meant to be shared.
func writeOutput(stdout io.Writer, path string, render func(io.Writer) error) error {
	if path == "" {
		return render(stdout)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".kaudit-*")
	if err != nil {
		return &exitError{code: ExitUsage, err: fmt.Errorf("cannot write %s: %v", path, err)}
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return &exitError{code: ExitUsage, err: err}
	}
	if err := render(f); err != nil {
		f.Close()
		return &exitError{code: ExitUsage, err: err}
	}
	if err := f.Close(); err != nil {
		return &exitError{code: ExitUsage, err: fmt.Errorf("cannot write %s: %v", path, err)}
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return &exitError{code: ExitUsage, err: fmt.Errorf("cannot write %s: %v", path, err)}
	}
	return nil
}
