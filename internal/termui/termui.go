// Package termui decides how kaudit's output fits the person's terminal:
// how wide it is (--width, else COLUMNS, else the tty's size, else 100),
// whether to colour (--color, NO_COLOR, CLICOLOR_FORCE), and how text is
// fitted to a width (prose wrapped at word boundaries with a hanging
// indent, cells truncated with an ellipsis, widths measured in terminal
// columns). The progress line is drawn from here too. It never decides
// what a report says, only how it is laid out.
package termui

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jedib0t/go-pretty/v6/text"
	"golang.org/x/term"
)

// DefaultWidth is the width used when the output is not a terminal and
// neither --width nor COLUMNS says otherwise.
const DefaultWidth = 100

// MinWidth is the narrowest layout kaudit tries to fit; below it lines
// may be wider than asked.
const MinWidth = 40

// Env is what Width and Color read from the environment (os.Getenv in
// production, a map in tests).
type Env func(string) string

// Width is the width to lay text out at: flag when positive, else
// COLUMNS when it is a positive number, else the size of f when it is a
// terminal, else DefaultWidth.
func Width(flag int, env Env, f *os.File) int {
	if flag > 0 {
		return flag
	}
	if n, err := strconv.Atoi(strings.TrimSpace(env("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f != nil && IsTerminal(f) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return DefaultWidth
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// colorModes are the values --color takes.
var colorModes = []string{"auto", "always", "never"}

// Color decides whether to colour: "always" and "never" decide alone;
// "auto" colours a terminal unless NO_COLOR is set (any value,
// no-color.org) or TERM is dumb, and colours even a pipe when
// CLICOLOR_FORCE is set to anything but 0.
func Color(mode string, env Env, terminal bool) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
	default:
		return false, fmt.Errorf("unknown --color %q (%s)", mode, strings.Join(colorModes, ", "))
	}
	switch {
	case env("NO_COLOR") != "":
		return false, nil
	case env("CLICOLOR_FORCE") != "" && env("CLICOLOR_FORCE") != "0":
		return true, nil
	case env("TERM") == "dumb":
		return false, nil
	}
	return terminal, nil
}

// StringWidth is the number of terminal columns s takes, escape
// sequences not counted.
func StringWidth(s string) int { return text.StringWidthWithoutEscSequences(s) }

// Truncate shortens s to at most width columns, ending it with "…" when
// it had to cut; width <= 0 means no limit.
func Truncate(s string, width int) string {
	if width <= 0 || StringWidth(s) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := StringWidth(string(r))
		if used+w > width-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return strings.TrimRight(b.String(), " ") + "…"
}

// Wrap folds runs of white space in s and breaks it into lines of at most
// width columns at word boundaries; lines after the first start with
// indent spaces (a hanging indent). A word longer than a line is cut.
// width <= 0 means no limit: s comes back on one line.
func Wrap(s string, width, indent int) []string {
	words := strings.Fields(s)
	if width <= 0 {
		return []string{strings.Join(words, " ")}
	}
	if indent > width/2 {
		indent = width / 2
	}
	pad := strings.Repeat(" ", indent)
	var lines []string
	line, lineW := "", 0
	for _, w := range words {
		ww := StringWidth(w)
		switch {
		case line == "" || lineW == indent && len(lines) > 0:
		case lineW+1+ww <= width:
			line += " "
			lineW++
		default:
			lines = append(lines, line)
			line, lineW = pad, indent
		}
		esc := ww > width && strings.ContainsRune(w, text.EscapeStartRune)
		for lineW+ww > width { // a word longer than a line: cut it
			head, headW, rest := cutWidth(w, width-lineW)
			lines = append(lines, line+head)
			line, lineW, w = pad, indent, rest
			if ww -= headW; esc { // the rest is never measured again (linear), unless escapes made headW count bytes
				ww = StringWidth(w)
			}
		}
		line += w
		lineW += ww
	}
	return append(lines, line)
}

// cutWidth splits s after at most n columns (at least one rune),
// preferring to break after a - . _ / , or : in the second half, so that
// 4.18.0-477.27.1.el8_8.x86_64 breaks between its parts; it returns the
// head, its width and the rest, and reads no further than the cut.
func cutWidth(s string, n int) (string, int, string) {
	used, cut, soft, softW := 0, len(s), -1, 0
	for i, r := range s {
		w := text.RuneWidth(r)
		if used+w > n && i > 0 {
			cut = i
			break
		}
		used += w
		if strings.ContainsRune("-._/,:", r) && used > n/2 {
			soft, softW = i+utf8.RuneLen(r), used
		}
	}
	if cut == len(s) {
		return s, used, ""
	}
	if soft > 0 {
		cut, used = soft, softW
	}
	return s[:cut], used, s[cut:]
}

// Layout is what --width, --color and --no-color ask for, before they
// are decided against the environment and the terminal.
type Layout struct {
	Width   int    // columns; 0: COLUMNS, the terminal's, else DefaultWidth
	Color   string // a colorModes value ("" is auto)
	NoColor bool   // same as Color "never"
}

// Decide is the width to lay out at and whether to colour, for output
// written to out (terminal: out is the person's terminal, not a file).
// A negative width, an unknown mode, or NoColor with a mode other than
// auto or never is an error that names the flag.
func (l Layout) Decide(env Env, out *os.File, terminal bool) (width int, color bool, err error) {
	if l.Width < 0 {
		return 0, false, fmt.Errorf("--width must be a positive number of columns")
	}
	width = Width(l.Width, env, out)
	mode := strings.ToLower(l.Color)
	if l.NoColor {
		if mode != "auto" && mode != "never" {
			return width, false, fmt.Errorf("--no-color contradicts --color %s", mode)
		}
		mode = "never"
	}
	color, err = Color(mode, env, terminal && IsTerminal(out))
	return width, color, err
}

// DecideFor is Decide under the process's environment for output
// written to w (the terminal when w is a *os.File open on one); toW is
// false when the output goes to a file instead (auto does not colour it).
func (l Layout) DecideFor(w io.Writer, toW bool) (width int, color bool, err error) {
	f, _ := w.(*os.File)
	return l.Decide(os.Getenv, f, toW)
}
