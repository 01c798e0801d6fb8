package report

import "testing"

func TestSourceText(t *testing.T) {
	for _, tt := range []struct {
		g    RuleGroup
		want string
	}{
		{RuleGroup{}, ""},
		{RuleGroup{Sources: []HostSource{{"a", "probe"}, {"b", "probe"}}}, "decided by: probe"},
		{RuleGroup{Sources: []HostSource{{"a", "changelog"}, {"b", "probe"}}}, "decided by: a changelog, b probe"},
	} {
		if got := sourceText(tt.g); got != tt.want {
			t.Errorf("sourceText(%+v) = %q, want %q", tt.g.Sources, got, tt.want)
		}
	}
	g := RuleGroup{Sources: []HostSource{{"a", "probe"}}}
	g.Sample.Reason = "kernel lacks it"
	if got := reasonWithSource(g); got != "kernel lacks it (decided by: probe)" {
		t.Errorf("reasonWithSource = %q", got)
	}
}
