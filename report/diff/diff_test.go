package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

func load(t *testing.T, name string) *report.Report {
	t.Helper()
	r, err := report.Load("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	report.Summarize(r)
	return r
}

func keys(cs []Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Host+"/"+c.Rule+":"+string(c.OldStatus)+">"+string(c.NewStatus))
	}
	return out
}

func TestCompareFixtures(t *testing.T) {
	d := Compare(load(t, "old.json"), load(t, "new.json"))
	check := func(name string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %q\n want %q", name, got, want)
		}
	}
	check("newly failing", keys(d.NewlyFailing), []string{"kafka-a1/tcp-timestamps:pass>fail", "kafka-d4/somaxconn:>fail"})
	check("newly passing", keys(d.NewlyPassing), []string{"kafka-a1/kafka-backlog-hardcoded:fail>pass", "kafka-a1/somaxconn:fail>pass"})
	check("still failing", keys(d.StillFailing), []string{"kafka-a1/kernel-synack-wscale:fail>fail"})
	check("other", keys(d.Other), []string{"kafka-b2/listen-overflows:pass>unknown"})
	check("added", d.HostsAdded, []string{"kafka-d4"})
	check("removed", d.HostsRemoved, []string{"kafka-c3"})
	var facts []string
	for _, f := range d.Facts {
		facts = append(facts, f.Host+" "+f.Fact+" "+f.Old+">"+f.New)
	}
	check("facts", facts, []string{
		"kafka-a1 kafka.version 2.8.1>3.6.1",
		"kafka-a1 sysctl.net.core.somaxconn 128>4096",
		"kafka-a1 sysctl.net.ipv4.tcp_timestamps 1>0",
		"kafka-b2 kernel.release 6.1.0-13-amd64>6.1.0-15-amd64",
	})
	if len(d.Scores) != 1 || d.Scores[0] != (ScoreChange{Host: "kafka-a1", Old: 30, New: 40}) {
		t.Errorf("scores %+v", d.Scores)
	}
	if d.Old.Hosts != 3 || d.New.Audited != 3 || d.Old.Fail != 3 || d.New.Fail != 3 {
		t.Errorf("sides %+v %+v", d.Old, d.New)
	}
	if d.NewlyFailingCount() != 2 || d.Empty() {
		t.Error("counts")
	}
	if c := d.NewlyFailing[0]; c.OldObserved != "1" || c.NewObserved != "0" || c.Severity != rules.High || c.Reason != "off" {
		t.Errorf("change detail %+v", c)
	}
}

func TestCompareSelfIsEmpty(t *testing.T) {
	d := Compare(load(t, "new.json"), load(t, "new.json"))
	if !d.Empty() || len(d.StillFailing) != 3 {
		t.Errorf("self diff: %+v", d)
	}
}

func TestAuditStateAndVanishedFindings(t *testing.T) {
	old := load(t, "old.json")
	new := load(t, "old.json")
	// kafka-a1 becomes unreachable; kafka-c3 becomes reachable with a failure.
	new.Hosts[0].Error = &report.HostError{Kind: "timeout", Message: "deadline"}
	new.Hosts[0].Facts, new.Hosts[0].Findings = nil, []rules.Finding{}
	new.Hosts[2].Error = nil
	new.Hosts[2].Findings = []rules.Finding{{Rule: "somaxconn", Status: rules.Fail, Severity: rules.Medium}}
	d := Compare(old, new)
	var facts []string
	for _, f := range d.Facts {
		facts = append(facts, f.Host+" "+f.Fact+" "+f.Old+">"+f.New)
	}
	want := []string{"kafka-a1 audit audited>not audited (timeout)", "kafka-c3 audit not audited (unreachable)>audited"}
	if !reflect.DeepEqual(facts, want) {
		t.Errorf("facts %q", facts)
	}
	if got := keys(d.NewlyFailing); !reflect.DeepEqual(got, []string{"kafka-c3/somaxconn:>fail"}) {
		t.Errorf("newly failing %q", got)
	}
	// The three findings kafka-a1 failed are gone, not passing.
	if got := keys(d.Other); len(got) != 3 || got[0] != "kafka-a1/kernel-synack-wscale:fail>" {
		t.Errorf("other %q", got)
	}
	if len(d.NewlyPassing) != 0 {
		t.Errorf("newly passing %q", keys(d.NewlyPassing))
	}
}

func TestWrite(t *testing.T) {
	d := Compare(load(t, "old.json"), load(t, "new.json"))
	var b bytes.Buffer
	if err := Write(&b, "table", d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"NEWLY FAILING (2)", "kafka-a1  tcp-timestamps  high      pass → fail  1 → 0", "— → fail", "HOSTS ADDED (1)\n  kafka-d4", "HOSTS REMOVED (1)\n  kafka-c3", "kafka-b2  kernel.release", "pass → unknown  0 → —"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := Write(&b, "markdown", d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "## Newly failing (2)\n\n| HOST | RULE |") {
		t.Errorf("markdown:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, "json", d); err != nil {
		t.Fatal(err)
	}
	var back Diff
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys(back.NewlyFailing), keys(d.NewlyFailing)) || len(back.Facts) != 4 {
		t.Errorf("json round trip: %+v", back)
	}
	var raw map[string]any
	json.Unmarshal(b.Bytes(), &raw) //nolint:errcheck
	for _, k := range []string{"newly_failing", "newly_passing", "still_failing", "other_changes", "hosts_added", "hosts_removed", "facts_changed", "scores_changed"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	if err := Write(&b, "html", d); err == nil {
		t.Error("unknown format accepted")
	}
	// Empty lists are [] in JSON, never null.
	b.Reset()
	Write(&b, "json", Compare(load(t, "new.json"), load(t, "new.json"))) //nolint:errcheck
	if strings.Contains(b.String(), "null") {
		t.Errorf("null in JSON:\n%s", b.String())
	}
}

// A host's text in a diff (kernel release, observed values) is shown,
// never obeyed: termsafe, as in every report format.
func TestWriteHostileText(t *testing.T) {
	old, new := load(t, "old.json"), load(t, "new.json")
	for i := range new.Hosts {
		if f := new.Hosts[i].Facts; f != nil {
			f.Kernel.Release += "\x1b]0;pwned\a\u202e"
		}
		for j := range new.Hosts[i].Findings {
			new.Hosts[i].Findings[j].Observed += "\x1b[2J"
		}
	}
	for _, format := range []string{"table", "markdown"} {
		var buf bytes.Buffer
		if err := Write(&buf, format, Compare(old, new)); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.ContainsAny(out, "\x1b\a\u202e") || !strings.Contains(out, `\x1b]0;pwned\a\u202e`) || !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%s: hostile text not made visible:\n%q", format, out)
		}
	}
}

// A diff of more than report.GroupedAbove hosts is written by group: one
// line per rule and status change with its hosts counted ("300 hosts
// newly fail somaxconn") and per cluster, a few hosts named.
func TestDiffGrouped(t *testing.T) {
	demo, err := report.Load("../testdata/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	old, now := report.Simulated(demo, 1000, 3), report.Simulated(demo, 1000, 3)
	old.Hosts = append([]report.Host(nil), old.Hosts...)
	failing := 0
	for i := range old.Hosts {
		h := &old.Hosts[i]
		h.Findings = append([]rules.Finding(nil), h.Findings...)
		for j := range h.Findings {
			if h.Findings[j].Rule == "somaxconn" && h.Findings[j].Status == rules.Fail {
				h.Findings[j].Status = rules.Pass
				failing++
			}
		}
	}
	report.Summarize(old)
	var b bytes.Buffer
	if err := Write(&b, "table", Compare(old, now)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := fmt.Sprintf("%d hosts newly fail somaxconn", failing)
	if failing < 100 || !strings.Contains(out, want) {
		t.Fatalf("no %q in:\n%s", want, out)
	}
	line := out[strings.Index(out, want):]
	line = line[:strings.IndexByte(line, '\n')]
	if !strings.Contains(line, "prod-1 ") || !strings.Contains(line, "prod-3 ") || !strings.Contains(line, " more") {
		t.Errorf("the group's clusters and hosts: %q", line)
	}
	if n := strings.Count(out, "\n"); n > 60 { // a line per host × rule: 9,000
		t.Errorf("%d lines:\n%s", n, out)
	}
}
