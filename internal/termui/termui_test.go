package termui

import (
	"os"
	"strings"
	"testing"
)

func env(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestWidth(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for _, c := range []struct {
		flag int
		env  map[string]string
		f    *os.File
		want int
	}{
		{flag: 80, env: map[string]string{"COLUMNS": "200"}, want: 80},
		{env: map[string]string{"COLUMNS": "132"}, want: 132},
		{env: map[string]string{"COLUMNS": "wide"}, f: devnull, want: DefaultWidth},
		{env: map[string]string{"COLUMNS": "-3"}, want: DefaultWidth},
		{f: devnull, want: DefaultWidth}, // not a terminal
	} {
		if got := Width(c.flag, env(c.env), c.f); got != c.want {
			t.Errorf("Width(%d, %v) = %d, want %d", c.flag, c.env, got, c.want)
		}
	}
}

func TestColor(t *testing.T) {
	for _, c := range []struct {
		mode string
		env  map[string]string
		tty  bool
		want bool
	}{
		{"auto", nil, true, true},
		{"auto", nil, false, false},
		{"auto", map[string]string{"NO_COLOR": "1"}, true, false},
		{"auto", map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"auto", map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{"auto", map[string]string{"NO_COLOR": "1", "CLICOLOR_FORCE": "1"}, false, false},
		{"auto", map[string]string{"TERM": "dumb"}, true, false},
		{"always", map[string]string{"NO_COLOR": "1"}, false, true},
		{"never", map[string]string{"CLICOLOR_FORCE": "1"}, true, false},
	} {
		got, err := Color(c.mode, env(c.env), c.tty)
		if err != nil || got != c.want {
			t.Errorf("Color(%q, %v, tty=%v) = %v, %v; want %v", c.mode, c.env, c.tty, got, err, c.want)
		}
	}
	if _, err := Color("sometimes", env(nil), true); err == nil || !strings.Contains(err.Error(), "auto, always, never") {
		t.Errorf("Color(sometimes) error = %v", err)
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer sentence here", 10, "a longer…"},
		{"世界世界世界", 7, "世界世…"},
		{"anything", 0, "anything"},
		{"ab", 1, "…"},
	} {
		got := Truncate(c.in, c.width)
		if got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if c.width > 0 && StringWidth(got) > c.width {
			t.Errorf("Truncate(%q, %d) is %d wide", c.in, c.width, StringWidth(got))
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in            string
		width, indent int
		want          []string
	}{
		{"one two three four", 9, 2, []string{"one two", "  three", "  four"}},
		{"folds   \n white", 40, 4, []string{"folds white"}},
		{"abcdefghijkl mn", 5, 1, []string{"abcde", " fghi", " jkl", " mn"}},
		{"no limit at all", 0, 3, []string{"no limit at all"}},
		{"kafka-centos7-01: 128 → >= 4096", 20, 4, []string{"kafka-centos7-01:", "    128 → >= 4096"}},
		{"4.18.0-477.27.1.el8_8.x86_64", 14, 0, []string{"4.18.0-477.27.", "1.el8_8.x86_64"}},
		{"3.10.0-1160.95.1.el7.x86_64", 12, 0, []string{"3.10.0-1160.", "95.1.el7.", "x86_64"}},
	} {
		got := Wrap(c.in, c.width, c.indent)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Wrap(%q, %d, %d) = %q, want %q", c.in, c.width, c.indent, got, c.want)
		}
		for _, l := range got {
			if c.width > 0 && StringWidth(l) > c.width {
				t.Errorf("Wrap(%q, %d): line %q is %d wide", c.in, c.width, l, StringWidth(l))
			}
		}
	}
}

func TestLayoutDecide(t *testing.T) {
	env := func(m map[string]string) Env { return func(k string) string { return m[k] } }
	cases := []struct {
		l         Layout
		env       map[string]string
		width     int
		color     bool
		wantError string
	}{
		{Layout{Width: 80, Color: "always"}, nil, 80, true, ""},
		{Layout{Color: "ALWAYS"}, map[string]string{"COLUMNS": "120"}, 120, true, ""},
		{Layout{Color: "auto"}, map[string]string{"CLICOLOR_FORCE": "1"}, DefaultWidth, true, ""},
		{Layout{Color: "always", NoColor: true}, nil, 0, false, "--no-color contradicts --color always"},
		{Layout{Color: "auto", NoColor: true}, map[string]string{"CLICOLOR_FORCE": "1"}, DefaultWidth, false, ""},
		{Layout{Width: -1}, nil, 0, false, "--width must be a positive number of columns"},
		{Layout{Color: "sometimes"}, nil, 0, false, `unknown --color "sometimes"`},
	}
	for _, c := range cases {
		w, col, err := c.l.Decide(env(c.env), nil, false)
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("%+v: err %v, want %q", c.l, err, c.wantError)
			}
			continue
		}
		if err != nil || w != c.width || col != c.color {
			t.Errorf("%+v: width %d colour %v err %v, want %d %v", c.l, w, col, err, c.width, c.color)
		}
	}
}

// TestWrapLongWordKeepsEveryRune: a word of many lines (wide runes, soft
// break points, and an escape sequence) is cut into lines no wider than
// the width that join back into the word.
func TestWrapLongWordKeepsEveryRune(t *testing.T) {
	for _, word := range []string{
		strings.Repeat("a", 1000),
		strings.Repeat("é界-x.", 300),
		strings.Repeat("ab", 100) + "\x1b[31m" + strings.Repeat("cd", 100) + "\x1b[0m",
	} {
		lines := Wrap("id "+word, 37, 2)
		joined := lines[0]
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "  ") {
				t.Fatalf("line %q lacks the indent", l)
			}
			joined += l[2:]
		}
		for _, l := range lines {
			if StringWidth(l) > 37 {
				t.Errorf("line %q is %d wide", l, StringWidth(l))
			}
		}
		if joined != "id "+word && joined != "id"+word {
			t.Errorf("the lines do not join back into the word:\n%q", lines)
		}
	}
}
