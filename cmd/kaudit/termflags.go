package main

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/termui"
)

// termOpts are the flags that shape what a person sees on the terminal:
// how long the report is, how wide, coloured or not, and the progress
// bar. stdout is where the report goes (the env's), to ask whether it is
// a terminal and how wide.
type termOpts struct {
	stdout  io.Writer
	verbose bool
	width   int
	color   string
	noColor bool
	quiet   bool
}

// flags are the flags of a command that prints a report.
func (o *termOpts) flags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "table: every host's observed value, the reason, the fix and the rationale per rule (default: one line per rule); demo: the whole fix plan", Destination: &o.verbose},
		&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour the table: `MODE` auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 colours a pipe too), always or never", Destination: &o.color},
		&cli.BoolFlag{Name: "no-color", Usage: "same as --color never", Destination: &o.noColor},
	}, o.layoutFlags()...)
}

// layoutFlags are the flags of a command that prints a plan, not a
// report (fix).
func (o *termOpts) layoutFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "width", Usage: "lay the table and the plan out for `N` columns", DefaultText: "$COLUMNS, else the terminal's width, else 100", Destination: &o.width},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar on stderr (drawn only when stderr is a terminal)", Destination: &o.quiet},
	}
}

// termOptions is what termOpts decided.
type termOptions struct {
	Width   int  // columns to lay the table and the plan out for
	Color   bool // colour the table
	Verbose bool
	Quiet   bool
}

// check decides for output going to stdout (toStdout) in format
// (termui.Layout); colour is only ever written for the table.
func (o termOpts) check(toStdout bool, format string) (termOptions, error) {
	t := termOptions{Verbose: o.verbose, Quiet: o.quiet}
	out, _ := o.stdout.(*os.File)
	width, color, err := termui.Layout{Width: o.width, Color: o.color, NoColor: o.noColor}.Decide(os.Getenv, out, toStdout)
	if err != nil {
		return t, usage(err)
	}
	t.Width, t.Color = width, color && format == "table"
	return t, nil
}
