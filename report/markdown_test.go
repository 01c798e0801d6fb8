package report

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/rules"
)

func TestMarkdownSections(t *testing.T) {
	out := renderString(t, "markdown", loadFixture(t), Options{})
	for _, want := range []string{
		"# kaudit pre-upgrade compliance report\n",
		"Generated 2025-03-14 09:30:00 UTC",
		"## Summary", "**Not ready:** 4 failing findings at or above high.",
		"## Hosts", "| kafka-b1 | 10.0.2.21 | 100 |", "7.5.0 (CP)",
		"## Failing rules", "## Not proven safe (unknown)", "## Hosts not audited",
		"| kafka-d1 | 10.0.4.41 | timeout | connect to 10.0.4.41:22: i/o timeout after 10s |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// Every table row has as many cells as its header.
	var cols int
	for i, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") - 1
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("line %d has %d cells, its table %d: %s", i+1, n, cols, l)
		}
	}
}

func TestMarkdownVerdicts(t *testing.T) {
	pass := rules.Finding{Rule: "somaxconn", Status: rules.Pass, Severity: rules.Medium}
	unknown := rules.Finding{Rule: "nic-ring", Status: rules.Unknown, Severity: rules.Medium}
	lowFail := rules.Finding{Rule: "syn-backlog", Status: rules.Fail, Severity: rules.Low}
	cases := []struct {
		name     string
		failOn   string
		findings []rules.Finding
		want     string
	}{
		{"ready", "", []rules.Finding{pass}, "**Ready:**"},
		{"low fail below fail-on", "high", []rules.Finding{pass, lowFail}, "**Ready:**"},
		{"low fail at fail-on low", "low", []rules.Finding{lowFail}, "**Not ready:** 1 failing finding at or above low."},
		{"unknown is not proven", "", []rules.Finding{unknown}, "**Not proven:** no failing finding at or above high, but 1 finding is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{SchemaVersion: SchemaVersion, FailOn: tc.failOn, Hosts: []Host{{Name: "h", Findings: tc.findings}}}
			Summarize(r)
			if out := renderString(t, "markdown", r, Options{}); !strings.Contains(out, tc.want) {
				t.Errorf("want %q in:\n%s", tc.want, out)
			}
		})
	}
}

func TestMarkdownEscaping(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a|b", `a\|b`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"[x](http://e)", `\[x\](http://e)`},
		{"*bold* _em_", `\*bold\* \_em\_`},
		{"tcp_max_syn_backlog", "tcp_max_syn_backlog"},
		{"two\nlines", "two lines"},
		{"a & b", `a \& b`},
	}
	for _, c := range cases {
		if got := mdText(c.in); got != c.want {
			t.Errorf("mdText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	codes := []struct{ in, want string }{
		{"4.19.0-12", "`4.19.0-12`"},
		{"a|b", "`a\\|b`"},
		{"x `y` z", "``x `y` z``"},
		{"`edge`", "`` `edge` ``"},
		{"", ""},
	}
	for _, c := range codes {
		if got := mdCode(c.in); got != c.want {
			t.Errorf("mdCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := &Report{SchemaVersion: SchemaVersion, Hosts: []Host{{Name: "h|1", Findings: []rules.Finding{
		{Rule: "r", Title: "t | <b>", Status: rules.Fail, Severity: rules.High, Observed: "a|b", Expected: "c", Reason: "x\ny | z"},
	}}}}
	Summarize(r)
	out := renderString(t, "markdown", r, Options{})
	if strings.Contains(out, "<b>") || strings.Contains(out, "x\ny") {
		t.Errorf("unescaped markup or newline in:\n%s", out)
	}
}
