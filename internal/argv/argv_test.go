package argv

import (
	"reflect"
	"testing"
)

func TestFlagsFirst(t *testing.T) {
	takesValue := func(name string) bool { return name == "format" || name == "f" }
	for _, c := range []struct{ in, want []string }{
		{[]string{"inv.yaml", "--format", "json"}, []string{"--format", "json", "inv.yaml"}},
		{[]string{"inv.yaml", "-f", "json", "--yes", "b"}, []string{"-f", "json", "--yes", "inv.yaml", "b"}},
		{[]string{"inv.yaml", "--format=json"}, []string{"--format=json", "inv.yaml"}},
		{[]string{"a", "--", "--format", "x"}, []string{"a", "--", "--format", "x"}},
		{[]string{"--yes", "a", "-", "--format"}, []string{"--yes", "--format", "a", "-"}}, // "-" is positional; a trailing value flag keeps no value
		{nil, nil},
	} {
		if got := FlagsFirst(c.in, takesValue); !reflect.DeepEqual(got, c.want) {
			t.Errorf("FlagsFirst(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
