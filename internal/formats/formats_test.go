package formats

import (
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[func() string]("diff format")
	r.Register("table", func() string { return "t" })
	r.Register("json", func() string { return "j" })
	if got := r.Names(); !slices.Equal(got, []string{"json", "table"}) {
		t.Errorf("Names() = %v, want sorted [json table]", got)
	}
	r.Names()[0] = "changed" // a copy: the registry is not mutable from outside
	if w, err := r.Lookup("json"); err != nil || w() != "j" {
		t.Errorf("Lookup(json): %v", err)
	}
	if _, err := r.Lookup("xml"); err == nil || err.Error() != `unknown diff format "xml" (known: json, table)` {
		t.Errorf("Lookup(xml): %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a name registered twice did not panic")
		}
	}()
	r.Register("json", nil)
}
