package termsafe

import (
	"bytes"
	"testing"
)

func TestLineAndBlock(t *testing.T) {
	for _, c := range []struct{ in, line, block string }{
		{"5.4.0-150-generic", "5.4.0-150-generic", "5.4.0-150-generic"},
		{"héllo 世界 ≥ → …", "héllo 世界 ≥ → …", "héllo 世界 ≥ → …"},
		{"a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"\x1b]0;pwned\a", `\x1b]0;pwned\a`, `\x1b]0;pwned\a`},
		{"\x1b]52;c;aGk=\x1b\\", `\x1b]52;c;aGk=\x1b\`, `\x1b]52;c;aGk=\x1b\`},
		{"\r\b\v\f\x00\x7f", `\r\b\v\f\x00\x7f`, `\r\b\v\f\x00\x7f`},
		{"\u009b2J", `\u009b2J`, `\u009b2J`},
		{"\x9b2J", `\x9b2J`, `\x9b2J`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`, `\u2066x\u2069\u200e\u200f\u061c`},
		{"a\u2028b", `a\u2028b`, `a\u2028b`},
		{"bad \xff\xfe utf8 \xe2\x82", `bad \xff\xfe utf8 \xe2\x82`, `bad \xff\xfe utf8 \xe2\x82`},
		{`C:\path`, `C:\path`, `C:\path`},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Block(c.in); got != c.block {
			t.Errorf("Block(%q) = %q, want %q", c.in, got, c.block)
		}
	}
}

// The escaped text never holds a byte a terminal acts on, whatever came in.
func FuzzLine(f *testing.F) {
	f.Add("\x1b[2J\u202e\x9b\u009b\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Block(s)} {
			for i := 0; i < len(out); i++ {
				if c := out[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
					t.Fatalf("escape(%q) = %q holds byte %#x", s, out, c)
				}
			}
			if Line(out) != Line(Line(out)) {
				t.Fatalf("Line is not stable on its output for %q", s)
			}
		}
	})
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	n, err := w.Write([]byte("kaudit: error: host said \x1b]0;x\a\n"))
	if err != nil || n != 32 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := buf.String(); got != "kaudit: error: host said \\x1b]0;x\\a\n" {
		t.Errorf("wrote %q", got)
	}
	if w.Unwrap() != &buf {
		t.Error("Unwrap does not return the stream underneath")
	}
}
