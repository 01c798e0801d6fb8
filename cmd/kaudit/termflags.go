package main

import (
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/termui"
)

// termFlags shape what a person sees on the terminal: how long the
// report is, how wide, coloured or not, and the progress bar.
func termFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "table: every host's observed value, the reason, the fix and the rationale per rule (default: one line per rule); demo: the whole fix plan"},
		&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour the table: `MODE` auto (on a terminal, unless NO_COLOR is set; CLICOLOR_FORCE=1 colours a pipe too), always or never"},
		&cli.BoolFlag{Name: "no-color", Usage: "same as --color never"},
	}, layoutFlags()...)
}

// layoutFlags are the termFlags of a command that prints a plan, not a
// report (fix).
func layoutFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "width", Usage: "lay the table and the plan out for `N` columns", DefaultText: "$COLUMNS, else the terminal's width, else 100"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar on stderr (drawn only when stderr is a terminal)"},
	}
}

// termOptions is what termFlags decided.
type termOptions struct {
	Width   int  // columns to lay the table and the plan out for
	Color   bool // colour the table
	Verbose bool
	Quiet   bool
}

// readTermFlags reads termFlags for output going to stdout (toStdout) in
// format; colour is only ever written for the table.
func readTermFlags(c *cli.Context, stdout io.Writer, toStdout bool, format string) (termOptions, error) {
	o := termOptions{Verbose: c.Bool("verbose"), Quiet: c.Bool("quiet")}
	if c.Int("width") < 0 {
		return o, usageErr("--width must be a positive number of columns")
	}
	out, _ := stdout.(*os.File)
	o.Width = termui.Width(c.Int("width"), os.Getenv, out)
	mode := strings.ToLower(c.String("color"))
	if c.Bool("no-color") {
		if c.IsSet("color") && mode != "never" {
			return o, usageErr("--no-color contradicts --color %s", mode)
		}
		mode = "never"
	}
	color, err := termui.Color(mode, os.Getenv, toStdout && termui.IsTerminal(out))
	if err != nil {
		return o, usageErr("%v", err)
	}
	o.Color = color && format == "table"
	return o, nil
}
