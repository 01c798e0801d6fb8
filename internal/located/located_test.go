package located

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestError(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "inv.yaml", Line: 3, Field: "hosts.b1.port", Msg: "70000 is not a port", Hint: "use 1-65535"}, "inv.yaml:3: hosts.b1.port: 70000 is not a port (hint: use 1-65535)"},
		{Error{File: "w.yaml", Line: 2, Field: "waivers[0]", Msg: "reason is required"}, "w.yaml:2: waivers[0]: reason is required"},
		{Error{File: "p.yaml", Msg: "empty"}, "p.yaml: empty"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestYAMLSyntax(t *testing.T) {
	for _, tc := range []struct {
		data, hint, want string
	}{
		{"a: [\n", "", "f.yaml:1: invalid YAML: did not find expected node content (hint: check the indentation and quoting around that line)"},
		{"a: 1\n\tb: 2\n", "give X", "f.yaml:2: invalid YAML: found a tab character that violates indentation (hint: YAML indentation must use spaces, not tabs)"},
		{"a: 1\nb: [1\n", "give X", "f.yaml:1: invalid YAML: did not find expected ',' or ']' (hint: give X)"},
	} {
		var v any
		err := yaml.Unmarshal([]byte(tc.data), &v)
		if err == nil {
			t.Fatalf("%q parsed", tc.data)
		}
		if got := YAMLSyntax("f.yaml", []byte(tc.data), err, tc.hint).Error(); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.data, got, tc.want)
		}
	}
	if line, msg := YAMLLine(errors.New("yaml: unmarshal errors")); line != 0 || msg != "unmarshal errors" {
		t.Errorf("no line: %d %q", line, msg)
	}
}

func TestDescribeNode(t *testing.T) {
	for src, want := range map[string]string{
		"{a: 1}": "a mapping", "[1]": "a list", "5": "the integer 5", "x": `the string "x"`,
		"~": "null", "true": "the boolean true", "1.5": "the number 1.5",
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		if got := DescribeNode(doc.Content[0]); got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
	if got := DescribeNode(nil); got != "nothing" {
		t.Errorf("nil: %q", got)
	}
}

func TestHint(t *testing.T) {
	base := errors.New("shard \"x\" is not K/N")
	err := Hint(base, "write K/N")
	if got, want := err.Error(), `shard "x" is not K/N (hint: write K/N)`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if !errors.Is(err, base) {
		t.Error("Hint hides the error it wraps")
	}
	if Hint(nil, "x") != nil || WithHint("m", "") != "m" {
		t.Error("nil error or empty hint changed")
	}
}
