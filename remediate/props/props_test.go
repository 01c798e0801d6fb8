package props

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const backlog = "socket.listen.backlog.size"

// Each case reads testdata/<name>.in and compares the output with
// testdata/<name>.golden byte for byte.
var goldenCases = []struct {
	name    string
	changes map[string]string
	opts    []Option
	edits   []Edit
}{
	{
		name:    "comments",
		changes: map[string]string{"socket.receive.buffer.bytes": "-1", backlog: "4096"},
		edits: []Edit{
			{Key: backlog, New: "4096", Line: 15, Appended: true},
			{Key: "socket.receive.buffer.bytes", Old: "102400", New: "-1", Line: 11},
		},
	},
	{
		name:    "crlf",
		changes: map[string]string{backlog: "4096", "num.network.threads": "8"},
		edits: []Edit{
			{Key: "num.network.threads", New: "8", Line: 5, Appended: true},
			{Key: backlog, Old: "50", New: "4096", Line: 3},
		},
	},
	{
		name:    "crlf-no-trailing-newline",
		changes: map[string]string{backlog: "4096", "num.network.threads": "8"},
		edits: []Edit{
			{Key: "num.network.threads", New: "8", Line: 3, Appended: true},
			{Key: backlog, Old: "50", New: "4096", Line: 2},
		},
	},
	{
		name:    "duplicate",
		changes: map[string]string{backlog: "4096"},
		edits:   []Edit{{Key: backlog, Old: "100", New: "4096", Line: 5}},
	},
	{
		name:    "continuation",
		changes: map[string]string{backlog: "4096", "log.dirs": "/data/3"},
		edits: []Edit{
			{Key: "log.dirs", Old: "/data/1,/data/2", New: "/data/3", Line: 7},
			{Key: backlog, Old: "128", New: "4096", Line: 4},
		},
	},
	{
		name: "separators",
		changes: map[string]string{
			"a.equals": "10", "b.spaced": "20", "c.colon": "30", "d.space": "40", "e.tabs": "50", "f.colon.spaced": "60",
		},
		edits: []Edit{
			{Key: "a.equals", Old: "1", New: "10", Line: 1},
			{Key: "b.spaced", Old: "2", New: "20", Line: 2},
			{Key: "c.colon", Old: "3", New: "30", Line: 3},
			{Key: "d.space", Old: "4", New: "40", Line: 4},
			{Key: "e.tabs", Old: "5", New: "50", Line: 5},
			{Key: "f.colon.spaced", Old: "6", New: "60", Line: 6},
		},
	},
	{
		name:    "no-trailing-newline",
		changes: map[string]string{backlog: "4096"},
		edits:   []Edit{{Key: backlog, New: "4096", Line: 3, Appended: true}},
	},
	{
		name:    "missing-appended",
		changes: map[string]string{backlog: "4096", "socket.receive.buffer.bytes": "102400"},
		opts:    []Option{AppendComment("set by kaudit run 20240101T000000Z-1a2b (kafka-backlog-config)")},
		edits: []Edit{
			{Key: backlog, New: "4096", Line: 5, Appended: true},
			{Key: "socket.receive.buffer.bytes", New: "102400", Line: 6, Appended: true},
		},
	},
	{
		name:    "noop",
		changes: map[string]string{backlog: "4096", "socket.receive.buffer.bytes": "102400"},
	},
	{
		name:    "key-only",
		changes: map[string]string{backlog: "4096", "num.network.threads": "8"},
		edits: []Edit{
			{Key: "num.network.threads", New: "8", Line: 3},
			{Key: backlog, New: "4096", Line: 2},
		},
	},
	{
		name:    "eof-continuation",
		changes: map[string]string{backlog: "4096"},
		edits:   []Edit{{Key: backlog, New: "4096", Line: 4, Appended: true}},
	},
	{
		name:    "trailing-whitespace",
		changes: map[string]string{backlog: "4096", "socket.receive.buffer.bytes": "-1"},
		edits: []Edit{
			{Key: backlog, Old: "50", New: "4096", Line: 1},
			{Key: "socket.receive.buffer.bytes", Old: "102400", New: "-1", Line: 2},
		},
	},
	{
		name:    "empty",
		changes: map[string]string{backlog: "4096"},
		opts:    []Option{AppendComment("set by kaudit")},
		edits:   []Edit{{Key: backlog, New: "4096", Line: 2, Appended: true}},
	},
	{
		name:    "secrets-untouched",
		changes: map[string]string{backlog: "4096"},
		edits:   []Edit{{Key: backlog, Old: "50", New: "4096", Line: 3}},
	},
	{
		name:    "odd-lines",
		changes: map[string]string{backlog: "4096", "num.io.threads": "16"},
		edits: []Edit{
			{Key: "num.io.threads", Old: "8", New: "16", Line: 10},
			{Key: backlog, Old: "100", New: "4096", Line: 12},
		},
	},
	{
		name:    "key-continued",
		changes: map[string]string{backlog: "4096"},
		edits:   []Edit{{Key: backlog, Old: "50", New: "4096", Line: 1}},
	},
}

func TestSetGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			in := read(t, tc.name+".in")
			out, edits, err := Set(in, tc.changes, tc.opts...)
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			golden := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := read(t, tc.name+".golden")
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s\n got: %q\nwant: %q", golden, out, want)
			}
			if !reflect.DeepEqual(edits, tc.edits) {
				t.Errorf("edits\n got: %+v\nwant: %+v", edits, tc.edits)
			}
			// Applying the same changes again changes nothing.
			again, edits2, err := Set(out, tc.changes, tc.opts...)
			if err != nil {
				t.Fatalf("second Set: %v", err)
			}
			if !bytes.Equal(again, out) || len(edits2) != 0 {
				t.Errorf("not idempotent: second run edits %+v, output %q", edits2, again)
			}
		})
	}
}

// TestNoopIsIdentical: a key already at its value is not touched, whatever
// its separator or trailing whitespace.
func TestNoopIsIdentical(t *testing.T) {
	in := read(t, "noop.in")
	out, edits, err := Set(in, map[string]string{backlog: "4096", "broker.id": "5"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) || len(edits) != 0 {
		t.Fatalf("no-op changed the file: edits %+v\n%q", edits, out)
	}
}

// TestUnrelatedBytesUnchanged sets every key of every test file, one at a
// time, and checks that the bytes that differ lie inside that key's last
// logical line: everything before and after it is byte for byte the same.
func TestUnrelatedBytesUnchanged(t *testing.T) {
	for _, tc := range goldenCases {
		in := read(t, tc.name+".in")
		lines, err := scan(in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		last := map[string]logical{}
		for _, l := range lines {
			last[l.key] = l
		}
		for key, l := range last {
			if checkKey(key) != nil {
				continue // "" or escaped keys: kaudit never sets those
			}
			out, edits, err := Set(in, map[string]string{key: "kaudit-x"})
			if err != nil {
				t.Fatalf("%s: set %s: %v", tc.name, key, err)
			}
			if len(edits) != 1 || edits[0].Appended {
				t.Fatalf("%s: set %s: edits %+v", tc.name, key, edits)
			}
			p := commonPrefix(in, out)
			s := commonSuffix(in[p:], out[p:])
			lineStart := lineOffset(in, l.line)
			if p < lineStart || len(in)-s > l.end {
				t.Errorf("%s: set %s changed bytes [%d,%d) outside its line [%d,%d)\nin:  %q\nout: %q",
					tc.name, key, p, len(in)-s, lineStart, l.end, in, out)
			}
		}
	}
}

func TestSetErrors(t *testing.T) {
	src := []byte("broker.id=0\n")
	for _, tc := range []struct {
		name    string
		src     []byte
		changes map[string]string
		want    string
	}{
		{"backslash value", src, map[string]string{"log.dirs": `C:\kafka`}, "backslash"},
		{"newline value", src, map[string]string{"a": "1\nb=2"}, "line break"},
		{"cr value", src, map[string]string{"a": "1\r"}, "line break"},
		{"leading space", src, map[string]string{"a": " 1"}, "leading whitespace"},
		{"trailing space", src, map[string]string{"a": "1 "}, "trailing whitespace"},
		{"non-ascii", src, map[string]string{"a": "é"}, "non-ASCII"},
		{"tab value", src, map[string]string{"a": "1\t2"}, "tab"},
		{"key with equals", src, map[string]string{"a=b": "1"}, "escaping"},
		{"key with colon", src, map[string]string{"a:b": "1"}, "escaping"},
		{"key with space", src, map[string]string{"a b": "1"}, "escaping"},
		{"key with backslash", src, map[string]string{`a\b`: "1"}, "escaping"},
		{"comment key", src, map[string]string{"#a": "1"}, "comment"},
		{"empty key", src, map[string]string{"": "1"}, "empty"},
		{"malformed unicode escape", []byte("a=\\u12\n"), map[string]string{"a": "1"}, "line 1: malformed"},
		// A value starting with '=' after a whitespace-only separator would
		// read back without it: the self-check refuses.
		{"value swallowed by separator", []byte("a 1\n"), map[string]string{"a": "=2"}, "read back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Set(tc.src, tc.changes)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, _, err := Set(src, map[string]string{"a": "1"}, AppendComment("two\nlines")); err == nil {
		t.Fatal("comment with a newline accepted")
	}
}

func TestSetEmptyValue(t *testing.T) {
	out, edits, err := Set([]byte("a=1\n"), map[string]string{"a": "", "b": ""})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "a=\nb=\n" || len(edits) != 2 {
		t.Fatalf("out %q edits %+v", out, edits)
	}
}

func TestParse(t *testing.T) {
	got, err := Parse(read(t, "continuation.in"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Entry{
		"broker.id": {Key: "broker.id", Value: "2", Line: 1},
		"listeners": {Key: "listeners", Value: "PLAINTEXT://0.0.0.0:9092,SSL://0.0.0.0:9093", Line: 2},
		backlog:     {Key: backlog, Value: "128", Line: 4},
		"log.dirs":  {Key: "log.dirs", Value: "/data/1,/data/2", Line: 7},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	esc, err := Parse([]byte("k\\=ey\\ x = a\\tb\\u0041\\\\\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e := esc["k=ey x"]; e.Value != "a\tbA\\" {
		t.Fatalf("escapes: %+v", esc)
	}
}

// TestParseMatchesJava reads every test file with java.util.Properties and
// compares the result with Parse. Skipped when java is not installed.
func TestParseMatchesJava(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not installed")
	}
	files, _ := filepath.Glob("testdata/*.in")
	goldens, _ := filepath.Glob("testdata/*.golden")
	files = append(files, goldens...)
	src := filepath.Join(t.TempDir(), "Dump.java")
	prog := `import java.io.*; import java.util.*;
public class Dump { public static void main(String[] a) throws Exception {
  for (String f : a) { Properties p = new Properties(); try (InputStream in = new FileInputStream(f)) { p.load(in); }
    List<String> keys = new ArrayList<>(p.stringPropertyNames()); Collections.sort(keys);
    System.out.print("FILE " + f + "\u0000");
    for (String k : keys) System.out.print(k + "\u0001" + p.getProperty(k).replaceAll("[ \t\f]+$", "") + "\u0000"); } } }`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(java, append([]string{src}, files...)...).CombinedOutput()
	if err != nil {
		t.Skipf("java could not run the check: %v\n%s", err, out)
	}
	javaView := map[string]map[string]string{}
	var cur string
	for _, rec := range strings.Split(string(out), "\x00") {
		if f, ok := strings.CutPrefix(rec, "FILE "); ok {
			cur = f
			javaView[cur] = map[string]string{}
		} else if k, v, ok := strings.Cut(rec, "\x01"); ok {
			javaView[cur][k] = v
		}
	}
	if len(javaView) != len(files) {
		t.Fatalf("java read %d files, want %d:\n%s", len(javaView), len(files), out)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		gotKV := map[string]string{}
		for k, e := range got {
			gotKV[k] = e.Value
		}
		if !reflect.DeepEqual(gotKV, javaView[f]) {
			t.Errorf("%s: Parse and java.util.Properties disagree\n got: %v\njava: %v", f, gotKV, javaView[f])
		}
	}
}

func FuzzSet(f *testing.F) {
	for _, tc := range goldenCases {
		b, err := os.ReadFile(filepath.Join("testdata", tc.name+".in"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, backlog, "4096")
	}
	f.Fuzz(func(t *testing.T, src []byte, key, val string) {
		out, edits, err := Set(src, map[string]string{key: val})
		if err != nil {
			return
		}
		got, err := Parse(out)
		if err != nil {
			t.Fatalf("output does not parse: %v", err)
		}
		if got[key].Value != val {
			t.Fatalf("%s reads %q, want %q", key, got[key].Value, val)
		}
		if len(edits) == 0 && !bytes.Equal(src, out) {
			t.Fatalf("no edit reported but output changed")
		}
	})
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// lineOffset returns the offset where 1-based physical line n starts.
func lineOffset(b []byte, n int) int {
	ph := splitPhysical(b)
	if n-1 < len(ph) {
		return ph[n-1].start
	}
	return len(b)
}
func FuzzSetStrict(f *testing.F) {
	f.Add([]byte("a=1\n"), "a", "2")
	f.Add([]byte("a\\\n"), "a", "2")
	f.Fuzz(func(t *testing.T, src []byte, key, val string) {
		if checkKey(key) != nil || checkValue(key, val) != nil || len(val) > 0 && (val[0] == '=' || val[0] == ':') {
			return
		}
		if _, err := Parse(src); err != nil {
			return
		}
		if _, _, err := Set(src, map[string]string{key: val}); err != nil {
			t.Fatalf("valid set refused: %v", err)
		}
	})
}

// TestAppendAfterContinuationAndCR: a file ending in a continuation whose
// last line ends in a lone CR (FuzzSetStrict found it: src "1\\\n\\\r")
// gets an empty line that is one: a CR, not a "\n" that would join the CR
// into one CRLF and let the appended key continue the last one (which
// then vanished, refused as 'from "" to ""').
func TestAppendAfterContinuationAndCR(t *testing.T) {
	cases := []struct{ src, want string }{
		{"1\\\n\\\r", "1\\\n\\\r\r0=0\n"},
		{"a=1\r\nb\\\r", "a=1\r\nb\\\r\r\n0=0\r\n"},
		{"a=1\nb\\\n", "a=1\nb\\\n\n0=0\n"},
	}
	for _, tc := range cases {
		out, edits, err := Set([]byte(tc.src), map[string]string{"0": "0"})
		if err != nil || string(out) != tc.want || len(edits) != 1 || !edits[0].Appended {
			t.Errorf("Set(%q): %q %+v %v, want %q", tc.src, out, edits, err, tc.want)
			continue
		}
		before, _ := Parse([]byte(tc.src))
		after, err := Parse(out)
		if err != nil || after["0"].Value != "0" || len(after) != len(before)+1 {
			t.Errorf("Set(%q) reads back %+v (%v)", tc.src, after, err)
		}
	}
}
