package report

import (
	"io"

	"github.com/kaudit/kaudit/internal/formats"
)

// Options tune a renderer; the terminal table honours all of them, the
// file formats none. Renderers take them as given: no renderer reads the
// environment or edits another's output.
type Options struct {
	// Color writes colour escape codes. Colour never carries meaning
	// alone: every coloured word is also written out.
	Color bool
	// Width is the number of terminal columns to fit into: tables shrink
	// their long columns, prose wraps. 0 means no limit.
	Width int
	// Verbose gives, per rule, every host's observed value, the reason,
	// the fix and the rationale; the default is one line per rule.
	Verbose bool
	// Hosts lists every host of each group in a report shown grouped
	// (more than GroupedAbove hosts); the default counts them and names
	// one.
	Hosts bool
}

// Renderer writes a report in one format.
type Renderer func(w io.Writer, r *Report, opt Options) error

var renderers = formats.New[Renderer]("format")

// Register adds a format; called from each format file's init.
func Register(name string, fn Renderer) { renderers.Register(name, fn) }

// Formats lists the registered format names, sorted.
func Formats() []string { return renderers.Names() }

// Render writes r in the named format.
func Render(w io.Writer, format string, r *Report, opt Options) error {
	fn, err := renderers.Lookup(format)
	if err != nil {
		return err
	}
	if format != "json" && r.spooled() { // only renderJSON prints spooled facts as they are
		if r, err = r.withViews(format); err != nil {
			return err
		}
	}
	return fn(w, r, opt)
}
