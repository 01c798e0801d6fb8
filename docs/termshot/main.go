// Command termshot turns a terminal capture with colour escape codes
// (tmux capture-pane -e -p) into a self-contained HTML page that looks
// like the terminal, for docs/generate.sh to screenshot with headless
// Chromium. Only SGR sequences are understood (bold, faint, the 8 + 8
// foreground colours, reset); any other byte below 0x20 but newline is
// dropped, and the text is HTML-escaped.
//
//	tmux capture-pane -e -p -t demo | go run ./docs/termshot -cols 80 -title "kaudit demo" > demo.html
package main

import (
	"bufio"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

var sgr = regexp.MustCompile("\x1b\\[([0-9;]*)m")

// palette is a dark terminal's colours (xterm-like), indexed by SGR
// colour 30-37 and 90-97.
var palette = map[int]string{
	30: "#555", 31: "#ef5350", 32: "#66bb6a", 33: "#ffca28", 34: "#42a5f5", 35: "#ab47bc", 36: "#26c6da", 37: "#ddd",
	90: "#888", 91: "#ff8a80", 92: "#b9f6ca", 93: "#ffe57f", 94: "#82b1ff", 95: "#ea80fc", 96: "#84ffff", 97: "#fff",
}

type style struct {
	bold, faint bool
	fg          int
}

func (s style) css() string {
	var parts []string
	if s.bold {
		parts = append(parts, "font-weight:bold")
	}
	if s.faint {
		parts = append(parts, "opacity:.6")
	}
	if c, ok := palette[s.fg]; ok {
		parts = append(parts, "color:"+c)
	}
	return strings.Join(parts, ";")
}

func (s style) apply(params string) style {
	if params == "" {
		return style{}
	}
	for _, p := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(p)
		switch {
		case n == 0:
			s = style{}
		case n == 1:
			s.bold = true
		case n == 2:
			s.faint = true
		case n == 22:
			s.bold, s.faint = false, false
		case n == 39:
			s.fg = 0
		case n >= 30 && n <= 37 || n >= 90 && n <= 97:
			s.fg = n
		}
	}
	return s
}

// convert writes the capture as HTML spans.
func convert(w io.Writer, capture string) {
	var cur style
	for _, line := range strings.Split(strings.TrimRight(capture, "\n"), "\n") {
		rest := line
		for rest != "" {
			loc := sgr.FindStringSubmatchIndex(rest)
			text := rest
			if loc != nil {
				text = rest[:loc[0]]
			}
			writeText(w, text, cur)
			if loc == nil {
				break
			}
			cur = cur.apply(rest[loc[2]:loc[3]])
			rest = rest[loc[1]:]
		}
		io.WriteString(w, "\n")
	}
}

func writeText(w io.Writer, s string, st style) {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return
	}
	if css := st.css(); css != "" {
		fmt.Fprintf(w, `<span style="%s">%s</span>`, css, html.EscapeString(s))
		return
	}
	io.WriteString(w, html.EscapeString(s))
}

func main() {
	cols := flag.Int("cols", 80, "the terminal's width in columns")
	title := flag.String("title", "kaudit", "the page title")
	flag.Parse()
	in, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fmt.Fprintln(os.Stderr, "termshot:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title><style>
body{margin:0;background:#1e1e1e}
pre{margin:0;padding:12px 16px;width:%dch;color:#ddd;background:#1e1e1e;font:14px/1.3 "DejaVu Sans Mono",monospace;white-space:pre}
</style></head><body><pre>`, html.EscapeString(*title), *cols)
	convert(out, string(in))
	io.WriteString(out, "</pre></body></html>\n")
	out.Flush()
}
