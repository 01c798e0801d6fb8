package main

import (
	"io"
	"os"
	"strings"

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

// check decides for output going to stdout (toStdout) in format; colour
// is only ever written for the table.
func (o termOpts) check(toStdout bool, format string) (termOptions, error) {
	t := termOptions{Verbose: o.verbose, Quiet: o.quiet}
	if o.width < 0 {
		return t, usageErr("--width must be a positive number of columns")
	}
	out, _ := o.stdout.(*os.File)
	t.Width = termui.Width(o.width, os.Getenv, out)
	mode := strings.ToLower(o.color)
	if o.noColor {
		if mode != "auto" && mode != "never" {
			return t, usageErr("--no-color contradicts --color %s", mode)
		}
		mode = "never"
	}
	color, err := termui.Color(mode, os.Getenv, toStdout && termui.IsTerminal(out))
	if err != nil {
		return t, usageErr("%v", err)
	}
	t.Color = color && format == "table"
	return t, nil
}
