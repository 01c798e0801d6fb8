package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendIndented must lay out what json.Indent does, byte for byte, for
// whatever json.Marshal produces.
func TestAppendIndentedIsJSONIndent(t *testing.T) {
	values := map[string]any{
		"scalars":       []any{1, -2.5e-7, true, false, nil, "s"},
		"empty":         map[string]any{"a": []int{}, "o": map[string]int{}, "n": nil, "s": ""},
		"nested empty":  []any{[]any{}, map[string]any{}, []any{[]any{map[string]any{}}}},
		"quotes":        map[string]string{`k"e\y`: `v"a\l"ue\`, "{[,:]}": "{[,:]}"},
		"escapes":       "\x00\x01\n\t\"\\</>&\u2028\u2029",
		"unicode":       "ünïcode – 日本 🚀",
		"deep":          map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": []int{1, 2}}}}},
		"empty top obj": map[string]any{},
		"empty top arr": []any{},
	}
	for name, v := range values {
		src, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range [][2]string{{"", "  "}, {"    ", "  "}, {"> ", "\t"}} {
			var want bytes.Buffer
			if err := json.Indent(&want, src, pi[0], pi[1]); err != nil {
				t.Fatal(err)
			}
			if got := appendIndented([]byte("x"), src, pi[0], pi[1]); string(got) != "x"+want.String() {
				t.Errorf("%s, prefix %q indent %q:\ngot  %s\nwant x%s", name, pi[0], pi[1], got, want.String())
			}
		}
	}
}

// The runes a terminal would obey are \u-escaped, inside strings only;
// the rest of the text, multi-byte runes included, is kept.
func TestAppendIndentedEscapesActingRunes(t *testing.T) {
	src, err := json.Marshal(map[string]string{"k\u202e": "a\x7fb\u0085c\u200fd\u2066é"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"k\\u202e\": \"a\\u007fb\\u0085c\\u200fd\\u2066é\"\n}"
	if got := string(appendIndented(nil, src, "", "  ")); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
