package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

func renderString(t *testing.T, format string, r *Report, opt Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, format, r, opt); err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return buf.String()
}

func TestTableColor(t *testing.T) {
	r := loadFixture(t)
	plain := renderString(t, "table", r, Options{})
	if strings.Contains(plain, "\x1b") {
		t.Error("Color false: output contains an escape code")
	}
	colored := renderString(t, "table", r, Options{Color: true})
	for _, seq := range []string{
		text.Colors{text.Bold, text.FgRed}.EscapeSeq(), // critical
		text.FgRed.EscapeSeq(),                         // high
		text.FgYellow.EscapeSeq(),                      // medium, unknown
		text.FgGreen.EscapeSeq(),                       // pass (kafka-b1's score)
	} {
		if !strings.Contains(colored, seq) {
			t.Errorf("Color true: no %q in output", seq)
		}
	}
	// Colour changes nothing but the escape codes: go-pretty measures cells
	// without them, so the layout is identical.
	if got := text.StripEscape(colored); got != plain {
		t.Errorf("coloured table differs from the plain one once escapes are stripped:\n%s", firstDiff(plain, got))
	}
}

// Options.Color decides, not the environment go-pretty looks at.
func TestTableColorIgnoresEnvironment(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("TERM", "dumb")
	text.DisableColors()
	defer text.EnableColors()
	if out := renderString(t, "table", loadFixture(t), Options{Color: true}); !strings.Contains(out, "\x1b[") {
		t.Error("Color true wrote no escape code when go-pretty's global colours are off")
	}
	t.Setenv("FORCE_COLOR", "1")
	text.EnableColors()
	if out := renderString(t, "table", loadFixture(t), Options{}); strings.Contains(out, "\x1b") {
		t.Error("Color false wrote escape codes when go-pretty's global colours are on")
	}
}

func TestTableContent(t *testing.T) {
	out := renderString(t, "table", loadFixture(t), Options{Verbose: true})
	lines := strings.Split(out, "\n")
	summary := ""
	for _, l := range lines {
		if strings.Contains(l, "fleet score") {
			summary = l
			break
		}
	}
	for _, want := range []string{"4 hosts", "3 audited", "1 error", "fleet score 58 (min 0)",
		"1 critical", "3 high", "5 medium", "3 low", "2 info", "3 unknown (not proven safe)"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary line %q lacks %q", summary, want)
		}
	}
	for _, want := range []string{
		"7.5.0 (CP)", // confluent marked
		"error timeout: connect to 10.0.4.41:22: i/o timeout after 10s", // error row
		"Not proven safe (unknown)",
		"2: kafka-a1, kafka-c1",                         // grouped hosts
		"kafka-a1: cubic with pfifo_fast → bbr with fq", // multi-host sample names its host
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	row := func(host string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, host+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s", host)
		return ""
	}
	if f := strings.Fields(strings.ReplaceAll(row("kafka-a1"), "│", " ")); f[len(f)-1] != "50" {
		t.Errorf("kafka-a1 backlog: row %v", f)
	}
	if f := strings.Fields(strings.ReplaceAll(row("kafka-c1"), "│", " ")); f[len(f)-1] != "-" {
		t.Errorf("kafka-c1 (no ss) backlog should be -: row %v", f)
	}
	// Failing groups come highest severity first.
	crit, info := strings.Index(out, "kernel-synack-wscale"), strings.Index(out, "congestion-control")
	if crit < 0 || info < 0 || crit > info {
		t.Error("critical group not listed before info group")
	}
}

func TestTableHostTruncation(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion}
	for i := 1; i <= 11; i++ {
		r.Hosts = append(r.Hosts, Host{Name: fmt.Sprintf("b%02d", i), Facts: &facts.Facts{KafkaPort: 9092},
			Findings: []rules.Finding{{Rule: "somaxconn", Title: "somaxconn", Status: rules.Fail, Severity: rules.Medium, Observed: "128", Expected: ">= 4096"}}})
	}
	Summarize(r)
	out := renderString(t, "table", r, Options{Verbose: true})
	if !strings.Contains(out, "+3 more") {
		t.Errorf("11 hosts should list 8 and +3 more:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  hosts ") && strings.Contains(l, "b09") {
			t.Errorf("the group's host list should stop at b08: %q", l)
		}
	}
	if got := hostList([]string{"a", "b", "c"}, 2); got != "a, b +1 more" {
		t.Errorf("hostList = %q", got)
	}
	if got := hostList([]string{"a", "b"}, 2); got != "a, b" {
		t.Errorf("hostList = %q", got)
	}
}

func TestTableAllPass(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Hosts: []Host{{Name: "ok1", Facts: &facts.Facts{KafkaPort: 9093,
		Listeners: []facts.Listener{{Port: 9092, Backlog: 10}, {Port: 9093, Backlog: 8192}, {Addr: "[::]", Port: 9093, Backlog: 4096}}},
		Findings: []rules.Finding{{Rule: "somaxconn", Status: rules.Pass, Severity: rules.Medium}}}}}
	Summarize(r)
	out := renderString(t, "table", r, Options{})
	if !strings.Contains(out, "none: no rule fails") {
		t.Error("all-pass report should say no rule fails")
	}
	if strings.Contains(out, "Not proven safe") {
		t.Error("no unknown section expected")
	}
	// Backlog is read on the inventory's Kafka port; the smallest socket wins.
	if !strings.Contains(out, " 4096\n") || strings.Contains(out, " 8192") {
		t.Errorf("backlog on port 9093 should be 4096:\n%s", out)
	}
}

func TestTablePaintPerLine(t *testing.T) {
	got := palette{on: true}.paint("a\nb", text.FgRed)
	want := text.FgRed.EscapeSeq() + "a" + text.Reset.EscapeSeq() + "\n" + text.FgRed.EscapeSeq() + "b" + text.Reset.EscapeSeq()
	if got != want {
		t.Errorf("paint = %q, want %q", got, want)
	}
	if got := (palette{}).paint("a\nb", text.FgRed); got != "a\nb" {
		t.Errorf("paint with colour off = %q", got)
	}
}

// -v carries what the old table carried and more: for every rule that
// fails, is unknown or waived, its title, every host's observed →
// expected, the reason, the fix and the rationale.
func TestTableVerboseCarriesDetail(t *testing.T) {
	r := loadFixture(t)
	out := renderString(t, "table", r, Options{Verbose: true})
	brief := renderString(t, "table", r, Options{})
	for _, g := range r.GroupByRule(rules.Fail, rules.Unknown, rules.Waived) {
		want := []string{g.Title, g.Sample.Reason}
		if g.Status == rules.Waived {
			want = []string{g.Title, waiverNote(g.Sample)}
		}
		for i, f := range g.Findings {
			if s := observedExpected(f); s != "" && g.Status != rules.Waived {
				want = append(want, g.Hosts[i]+": "+s)
			}
		}
		if g.Sample.Fix != nil && g.Status != rules.Waived {
			want = append(want, g.Sample.Fix.Summary)
		}
		if cr, ok := rules.Lookup(g.Rule); ok {
			want = append(want, oneLine(cr.Rationale))
		}
		for _, w := range want {
			if w != "" && !strings.Contains(out, oneLine(w)) {
				t.Errorf("%s (%s): verbose table lacks %q", g.Rule, g.Status, w)
			}
		}
		if g.Sample.Fix != nil && g.Sample.Fix.Summary != "" && strings.Contains(brief, g.Sample.Fix.Summary) {
			t.Errorf("%s: the short table carries the fix %q: it belongs to -v", g.Rule, g.Sample.Fix.Summary)
		}
	}
	if !strings.Contains(brief, "-v for every host's observed value") {
		t.Error("the short table does not say where the details are")
	}
}
