package pipeline

import (
	"io"

	"github.com/kaudit/kaudit/internal/atomicfile"
)

// writeOutput renders to w, or when path is set to that file atomically
// (atomicfile), so a reader never sees half a report and a failed render
// leaves the previous file in place. Files are 0644: reports, diffs and
// what-ifs are meant to be shared.
func writeOutput(w io.Writer, path string, render func(io.Writer) error) error {
	if path == "" {
		return render(w)
	}
	return atomicfile.Write(path, 0o644, render)
}
