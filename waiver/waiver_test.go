package waiver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

const good = `# accepted risks
waivers:
  - rule: kernel-synack-wscale
    hosts: [kafka-centos7-*, kafka-buster-07]
    reason: kernel upgrade scheduled (CHG-1234)
    owner: platform-team
    expires: 2026-12-31
  - rule: somaxconn
    groups: [legacy]
    reason: "legacy rack, decommissioned in Q1"
  - rule: nic-ring
    hosts: kafka-a1
    reason: virtio NIC, no ring settings
    expires: "2026-01-15"
`

func TestParseGood(t *testing.T) {
	w, err := Parse("w.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 3 {
		t.Fatalf("%d waivers", len(w))
	}
	a := w[0]
	if a.Rule != "kernel-synack-wscale" || len(a.Hosts) != 2 || a.Owner != "platform-team" || a.Line != 3 || a.Where() != "w.yaml:3" {
		t.Errorf("first: %+v", a)
	}
	if got := a.Expires.Format(DateLayout); got != "2026-12-31" {
		t.Errorf("expires %s", got)
	}
	if !w[1].Expires.IsZero() || len(w[1].Groups) != 1 {
		t.Errorf("second: %+v", w[1])
	}
	if len(w[2].Hosts) != 1 || w[2].Hosts[0] != "kafka-a1" {
		t.Errorf("a single string is a one-element list: %+v", w[2])
	}
	// A bare list is accepted too.
	bare := "- rule: somaxconn\n  hosts: ['*']\n  reason: r\n"
	if w, err := Parse("b.yaml", []byte(bare)); err != nil || len(w) != 1 {
		t.Fatalf("bare list: %v %v", w, err)
	}
	if w, err := Parse("e.yaml", []byte("waivers:\n")); err != nil || len(w) != 0 {
		t.Fatalf("empty waivers list: %v %v", w, err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown key", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n    reason: r\n    expire: 2026-01-01\n",
			[]string{`x.yaml:5: waivers[0].expire: unknown key (known: rule, hosts, groups, brokers, reason, owner, expires) (hint: did you mean "expires"?)`}},
		{"reason required", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n",
			[]string{"x.yaml:2: waivers[0]: reason is required"}},
		{"empty reason", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n    reason: ''\n",
			[]string{"x.yaml:2: waivers[0].reason: must not be empty"}},
		{"bad date", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n    reason: r\n    expires: 31/12/2026\n",
			[]string{`x.yaml:5: waivers[0].expires: expected a date YYYY-MM-DD, got "31/12/2026"`}},
		{"impossible date", "waivers:\n  - rule: somaxconn\n    hosts: [a]\n    reason: r\n    expires: 2026-02-30\n",
			[]string{`x.yaml:5: waivers[0].expires: expected a date YYYY-MM-DD`}},
		{"unknown rule", "waivers:\n  - rule: somaxcon\n    hosts: [a]\n    reason: r\n",
			[]string{`x.yaml:2: waivers[0].rule: unknown rule "somaxcon" (hint: did you mean "somaxconn"?)`}},
		{"rule required", "waivers:\n  - hosts: [a]\n    reason: r\n",
			[]string{"x.yaml:2: waivers[0]: rule is required"}},
		{"no hosts or groups", "waivers:\n  - rule: somaxconn\n    reason: r\n",
			[]string{"x.yaml:2: waivers[0]: hosts, groups or brokers is required"}},
		{"brokers on a host rule", "waivers:\n  - rule: somaxconn\n    brokers: [7]\n    reason: r\n",
			[]string{`x.yaml:2: waivers[0].brokers: somaxconn is a host rule (hint: brokers are for the cluster rules that kaudit rules lists last`}},
		{"broker not a node ID", "waivers:\n  - rule: broker-unaudited\n    brokers: [kafka-7]\n    reason: r\n",
			[]string{`x.yaml:3: waivers[0].brokers: expected node IDs (0, 7, …) or "*", got "kafka-7"`}},
		{"bad glob", "waivers:\n  - rule: somaxconn\n    hosts: ['kafka-[']\n    reason: r\n",
			[]string{`x.yaml:3: waivers[0].hosts: bad glob "kafka-["`}},
		{"hosts mapping", "waivers:\n  - rule: somaxconn\n    hosts: {a: 1}\n    reason: r\n",
			[]string{"x.yaml:3: waivers[0].hosts: expected a list of strings, got a mapping"}},
		{"duplicate key", "waivers:\n  - rule: somaxconn\n    rule: nic-ring\n    hosts: [a]\n    reason: r\n",
			[]string{"x.yaml:3: waivers[0].rule: given twice"}},
		{"top-level key", "waiver:\n  - rule: somaxconn\n", []string{"x.yaml:1: waiver: unknown top-level key"}},
		{"scalar entry", "waivers:\n  - somaxconn\n", []string{"x.yaml:2: waivers[0]: expected a mapping"}},
		{"not a list", "waivers: somaxconn\n", []string{"x.yaml:1: waivers: expected a list of entries"}},
		{"empty file", "", []string{"x.yaml: empty file"}},
		{"syntax", "waivers: [\n", []string{"x.yaml:1: invalid YAML: did not find expected node content (hint: docs/waivers.example.yaml shows the format)"}},
		{"syntax further down", "waivers:\n  - rule: somaxconn\n    hosts: [a\n    reason: r\n", []string{"x.yaml:2: invalid YAML: did not find expected ',' or ']'"}},
		{"every problem at once", "waivers:\n  - rule: nope\n    hosts: [a]\n  - rule: somaxconn\n    reason: r\n    colour: red\n",
			[]string{`x.yaml:2: waivers[0].rule: unknown rule "nope"`, "x.yaml:2: waivers[0]: reason is required", "x.yaml:4: waivers[1]: hosts, groups or brokers", "x.yaml:6: waivers[1].colour: unknown key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Parse("x.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error, got %+v", w)
			}
			msg := err.Error()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error\n%s\nlacks %q", msg, want)
				}
			}
			if w != nil {
				t.Errorf("waivers returned with an error: %+v", w)
			}
		})
	}
}

func day(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestExpiry(t *testing.T) {
	w := Waiver{Expires: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}
	for _, tc := range []struct {
		now     string
		expired bool
		left    int
	}{
		{"2026-12-30T12:00:00Z", false, 1},
		{"2026-12-31T00:00:00Z", false, 0},
		{"2026-12-31T23:59:59Z", false, 0},
		{"2027-01-01T00:00:00Z", true, -1},
		{"2027-01-01T00:30:00+01:00", false, 0}, // still Dec 31 in UTC
	} {
		now := day(tc.now)
		if got := w.Expired(now); got != tc.expired {
			t.Errorf("%s: expired %v, want %v", tc.now, got, tc.expired)
		}
		if got := w.DaysLeft(now); got != tc.left {
			t.Errorf("%s: %d days left, want %d", tc.now, got, tc.left)
		}
	}
	far := Waiver{Expires: time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC)}
	if got := far.DaysLeft(day("2026-12-01T08:00:00Z")); got != 355411 {
		t.Errorf("2999-12-31: %d days left, want 355411 (not capped at time.Duration's 106751)", got)
	}
	if (Waiver{}).Expired(time.Now()) {
		t.Error("a waiver without expires never expires")
	}
}

func TestMatches(t *testing.T) {
	w := Waiver{Rule: "somaxconn", Hosts: []string{"kafka-east-*", "kafka-west-01"}, Groups: []string{"legacy"}}
	for _, tc := range []struct {
		rule, host string
		groups     []string
		want       bool
	}{
		{"somaxconn", "kafka-east-07", nil, true},
		{"somaxconn", "kafka-west-01", nil, true},
		{"somaxconn", "kafka-west-02", nil, false},
		{"somaxconn", "kafka-west-02", []string{"brokers", "legacy"}, true},
		{"nic-ring", "kafka-east-07", []string{"legacy"}, false},
	} {
		if got := w.Matches(tc.rule, tc.host, tc.groups); got != tc.want {
			t.Errorf("%s on %s %v: %v, want %v", tc.rule, tc.host, tc.groups, got, tc.want)
		}
	}
}

func testReport() *report.Report {
	r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{
		{Name: "kafka-centos7-01", Groups: []string{"brokers"}, Findings: []rules.Finding{
			{Rule: "kernel-synack-wscale", Status: rules.Fail, Severity: rules.Critical},
			{Rule: "somaxconn", Status: rules.Fail, Severity: rules.Medium},
			{Rule: "nic-ring", Status: rules.Pass, Severity: rules.Medium},
		}},
		{Name: "kafka-rhel8-04", Groups: []string{"legacy"}, Findings: []rules.Finding{
			{Rule: "kernel-synack-wscale", Status: rules.Unknown, Severity: rules.Critical},
			{Rule: "somaxconn", Status: rules.Fail, Severity: rules.Medium},
		}},
		{Name: "kafka-a1", Findings: []rules.Finding{
			{Rule: "nic-ring", Status: rules.Fail, Severity: rules.Medium},
		}},
		{Name: "kafka-down", Error: &report.HostError{Kind: "unreachable"}, Findings: []rules.Finding{}},
	}}
	report.Summarize(r)
	return r
}

func TestApplyWaivers(t *testing.T) {
	w, err := Parse("w.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	r := testReport()
	if r.Hosts[0].Score != 50 || r.WorstFailure() != rules.Critical {
		t.Fatalf("before: score %d worst %s", r.Hosts[0].Score, r.WorstFailure())
	}
	warns := ApplyWaivers(r, w, day("2026-06-01T10:00:00Z"))
	if len(warns) != 1 || !strings.Contains(warns[0], "w.yaml:11: waiver for nic-ring on hosts kafka-a1 expired on 2026-01-15") || !strings.Contains(warns[0], "1 finding(s)") {
		t.Errorf("warnings %q", warns)
	}
	st := func(h, rule string) rules.Finding {
		for _, host := range r.Hosts {
			for _, f := range host.Findings {
				if host.Name == h && f.Rule == rule {
					return f
				}
			}
		}
		t.Fatalf("no %s on %s", rule, h)
		return rules.Finding{}
	}
	for _, tc := range []struct {
		host, rule string
		want       rules.Status
	}{
		{"kafka-centos7-01", "kernel-synack-wscale", Waived},
		{"kafka-centos7-01", "somaxconn", rules.Fail},             // not in group legacy
		{"kafka-centos7-01", "nic-ring", rules.Pass},              // passing findings are never waived
		{"kafka-rhel8-04", "kernel-synack-wscale", rules.Unknown}, // hosts glob does not match
		{"kafka-rhel8-04", "somaxconn", Waived},                   // group legacy
		{"kafka-a1", "nic-ring", rules.Fail},                      // waiver expired
	} {
		if got := st(tc.host, tc.rule).Status; got != tc.want {
			t.Errorf("%s/%s: %s, want %s", tc.host, tc.rule, got, tc.want)
		}
	}
	ev := st("kafka-centos7-01", "kernel-synack-wscale").Evidence
	if len(ev) != 1 || ev[0] != "waived (was fail) by w.yaml:3, until 2026-12-31, owner platform-team: kernel upgrade scheduled (CHG-1234)" {
		t.Errorf("evidence %q", ev)
	}
	if r.Hosts[0].Score != 90 || r.Hosts[1].Score != 100 {
		t.Errorf("scores after waivers: %d %d", r.Hosts[0].Score, r.Hosts[1].Score)
	}
	if r.WorstFailure() != rules.Medium {
		t.Errorf("worst failure %s, want medium (critical waived)", r.WorstFailure())
	}
	if r.Summary.StatusCounts["waived"] != 2 || r.Summary.FailBySeverity["critical"] != 0 {
		t.Errorf("summary %+v", r.Summary)
	}

	// Unknown findings are waivable too; applying twice changes nothing more.
	w2 := Waivers{{Rule: "kernel-synack-wscale", Hosts: []string{"*"}, Reason: "r", File: "w2", Line: 1}}
	ApplyWaivers(r, w2, time.Now())
	if got := st("kafka-rhel8-04", "kernel-synack-wscale"); got.Status != Waived || !strings.Contains(got.Evidence[0], "was unknown") {
		t.Errorf("unknown not waived: %+v", got)
	}
	if ev := st("kafka-centos7-01", "kernel-synack-wscale").Evidence; len(ev) != 1 {
		t.Errorf("re-applied: %q", ev)
	}
}

// A cluster rule's findings (scan --bootstrap) are waived by node ID, by
// the host they name (hosts or groups), or all at once with brokers "*";
// a waived one no longer counts toward --fail-on.
func TestApplyWaiversToTheCluster(t *testing.T) {
	w, err := Parse("c.yaml", []byte(`waivers:
  - rule: broker-unaudited
    brokers: ["07"]
    reason: broker 7 is the streams team's
    owner: streams
  - rule: host-not-a-broker
    groups: [legacy]
    reason: decommissioned in Q1
  - rule: advertised-shared
    brokers: ["*"]
    reason: behind the NLB by design
    expires: 2026-01-31
`))
	if err != nil {
		t.Fatal(err)
	}
	r := testReport()
	r.Cluster = &report.Cluster{ID: "Xy3", Problems: []report.ClusterProblem{
		{Rule: "broker-unaudited", Severity: "high", NodeID: 7, Message: "broker 7 …"},
		{Rule: "broker-unaudited", Severity: "high", NodeID: 8, Message: "broker 8 …"},
		{Rule: "host-not-a-broker", Severity: "medium", NodeID: -1, Host: "kafka-rhel8-04", Message: "host kafka-rhel8-04 …"},
		{Rule: "advertised-shared", Severity: "medium", NodeID: -1, Message: "all 3 brokers …"},
	}}
	warns := ApplyWaivers(r, w, day("2026-06-01T10:00:00Z"))
	if len(warns) != 1 || !strings.Contains(warns[0], "c.yaml:9: waiver for advertised-shared") || !strings.Contains(warns[0], ": 1 finding(s) it covers are not waived") {
		t.Errorf("warnings %q", warns)
	}
	want := []string{
		"by c.yaml:2, no expiry, owner streams: broker 7 is the streams team's",
		"",
		"by c.yaml:6, no expiry: decommissioned in Q1",
		"", // expired
	}
	for i, p := range r.Cluster.Problems {
		if p.Waived != want[i] {
			t.Errorf("%s node %d host %q: waived %q, want %q", p.Rule, p.NodeID, p.Host, p.Waived, want[i])
		}
	}
	if l := r.Cluster.Problems[0].Label(); l != "waived (was high)" {
		t.Errorf("label %q", l)
	}
	// broker 8 is still unaudited: high, over the hosts' critical once
	// that is waived too.
	ApplyWaivers(r, Waivers{{Rule: "kernel-synack-wscale", Hosts: []string{"*"}, Reason: "r", File: "w2", Line: 1}}, day("2026-06-01T10:00:00Z"))
	if got := r.WorstFailure(); got != rules.High {
		t.Errorf("worst failure %s, want high (broker 8)", got)
	}
	ApplyWaivers(r, Waivers{{Rule: "broker-unaudited", Brokers: []string{"*"}, Reason: "r", File: "w3", Line: 1}}, day("2026-06-01T10:00:00Z"))
	if got := r.WorstFailure(); got != rules.Medium {
		t.Errorf("worst failure %s, want medium (somaxconn; every cluster finding but advertised-shared waived, and it is medium)", got)
	}
	if !strings.HasPrefix(r.Cluster.Problems[0].Waived, "by c.yaml:2") {
		t.Errorf("re-applied: %q", r.Cluster.Problems[0].Waived)
	}
}

// The example shipped in docs/ stays valid.
func TestDocsExample(t *testing.T) {
	w, err := Load("../docs/waivers.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 4 || w[0].Line != 12 || !w[2].Expires.IsZero() || len(w[3].Brokers) != 1 || w[3].Brokers[0] != "7" {
		t.Errorf("%+v", w)
	}
}

func TestLoadMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing.yaml")
	_, err := Load(p)
	want := p + ": cannot read the waiver file: no such file or directory (hint: give the path of a YAML waiver file; docs/waivers.example.yaml shows the format)"
	if err == nil || err.Error() != want {
		t.Errorf("err\n%v\nwant\n%s", err, want)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "cannot read the waiver file: is a directory") {
		t.Errorf("a directory: err %v", err)
	}
}

// TestParseErrorsCapped: a file of thousands of bad entries lists the
// first MaxErrors problems and counts the rest, in bounded output.
func TestParseErrorsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("waivers:\n")
	for range 5000 {
		b.WriteString("  - nope\n")
	}
	_, err := Parse("x.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxErrors+1 || lines[MaxErrors] != "… and 4980 more problems in x.yaml" || !strings.HasPrefix(lines[0], "x.yaml:2: waivers[0]: expected a mapping") {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
