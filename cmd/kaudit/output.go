package main

import (
	"io"

	"github.com/kaudit/kaudit/internal/atomicfile"
)

// writeOutput renders to stdout, or to path atomically (atomicfile), so a
// reader never sees half a report and a failed render leaves the previous
// file in place. Files are 0644: reports are meant to be shared.
func writeOutput(stdout io.Writer, path string, render func(io.Writer) error) error {
	if path == "" {
		return render(stdout)
	}
	if err := atomicfile.Write(path, 0o644, render); err != nil {
		return usage(err)
	}
	return nil
}
