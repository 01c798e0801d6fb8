// Package ui is kaudit's terminal input: whether a stream is one, a yes/no
// question and a password (echo off) asked only there. Nothing here
// decides what to do with an answer; the CLI does. (How output fits a
// terminal, and the progress line, are internal/termui's.)
package ui

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kaudit/kaudit/internal/termui"
)

// IsTerminal reports whether w is a file open on a terminal
// (termui.IsTerminal for any stream).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && termui.IsTerminal(f)
}

// Ask writes question and " [y/N] " to prompt and reads one line of in:
// yes for "y" or "yes" (any case). asked is false, and nothing is
// written, when in is not a terminal.
func Ask(in io.Reader, prompt io.Writer, question string) (yes, asked bool) {
	if !IsTerminal(in) {
		return false, false
	}
	fmt.Fprintf(prompt, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", true
}
