// Package termsafe makes text that came from a host safe to show to a
// person. A kernel release, an os-release name, a property value, an
// ss line or an SSH error message is untrusted: printed raw, an escape
// sequence in it can clear the operator's screen, set the window title or
// write the clipboard (OSC 52), and a bidi override can make a line read
// differently from what it says. OpenSSH makes remote text visible with
// strnvis before printing it; every kaudit renderer except JSON (which
// keeps the exact value, escaped by its encoder) calls this package at the
// point where a host's string is written.
//
// What is made visible, and how:
//
//	C0 controls, DEL   \a \b \t \n \v \f \r by name, ESC as \x1b, others \xNN
//	C1 controls        \u0080 … \u009f (a terminal may read U+009B as CSI)
//	bidi controls      \u202a … \u202e, \u2066 … \u2069, \u200e \u200f \u061c
//	line separators    \u2028 \u2029
//	invalid UTF-8      each bad byte as \xNN (a raw 0x9b is CSI on 8-bit terminals)
//
// A backslash is left alone: the escaped text is for reading, and the
// JSON report holds the exact bytes.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Line returns s with every character listed in the package comment made
// visible, tab and newline included: for a value shown on one line (a
// table cell, a Prometheus label, an attribute).
func Line(s string) string { return escape(s, false) }

// Block is Line but keeps tab and newline, for text shown as lines of
// its own (an error message on stderr, JUnit element text, a plan note).
func Block(s string) string { return escape(s, true) }

// cleanFrom is the index of the first byte escape must look at, len(s)
// when there is none.
func cleanFrom(s string, keepLines bool) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && !(keepLines && (c == '\t' || c == '\n')) || c >= 0x7f {
			return i
		}
	}
	return len(s)
}

func escape(s string, keepLines bool) string {
	start := cleanFrom(s, keepLines)
	if start == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:start])
	for i := start; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\t' || r == '\n'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(c0Name(r))
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func c0Name(r rune) string {
	switch r {
	case '\a':
		return `\a`
	case '\b':
		return `\b`
	case '\t':
		return `\t`
	case '\n':
		return `\n`
	case '\v':
		return `\v`
	case '\f':
		return `\f`
	case '\r':
		return `\r`
	}
	return fmt.Sprintf(`\x%02x`, r)
}

// Acts reports whether r is a character Line makes visible because a
// terminal acts on it or it reorders displayed text: C0 controls, DEL,
// C1 controls, bidi controls, line and paragraph separators.
func Acts(r rune) bool { return r < 0x20 || r == 0x7f || unsafeRune(r) }

// unsafeRune reports the non-ASCII runes that act on a terminal or on the
// order text is displayed in.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c: // bidi marks
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// Writer applies Block to everything written through it: for a stream
// such as stderr whose every line may carry a host's text. Each Write is
// escaped on its own, so write whole messages (fmt.Fprintf does).
type Writer struct{ w io.Writer }

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it; it reports len(p) on success.
func (s *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, Block(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap is the stream underneath, for code that draws on the terminal
// itself (the progress bar) and must know whether it is one.
func (s *Writer) Unwrap() io.Writer { return s.w }
