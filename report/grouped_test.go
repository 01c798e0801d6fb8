package report

import (
	"bytes"
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"testing"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// The grouped formats at 10 simulated hosts (the demo: shown as today, a
// row per host) and at 1,000 (grouped), as golden files. The 1,000-host
// HTML page is checked by structure and size instead (0.7 MB of mostly
// data): TestGroupedHTML.
func TestGroupedGolden(t *testing.T) {
	cases := []struct {
		name     string
		hosts    int
		format   string
		opt      Options
		maxLines int
	}{
		{"sim10.w120.table", 10, "table", Options{Width: 120}, 0},
		{"sim10.markdown", 10, "markdown", Options{}, 0},
		{"sim10.html", 10, "html", Options{}, 0},
		{"sim1000.w120.table", 1000, "table", Options{Width: 120}, 80},
		{"sim1000.w80.table", 1000, "table", Options{Width: 80}, 0},
		{"sim1000.w120.color.table", 1000, "table", Options{Width: 120, Color: true}, 80},
		{"sim1000.w120.hosts.table", 1000, "table", Options{Width: 120, Hosts: true}, 0},
		{"sim1000.markdown", 1000, "markdown", Options{}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := simulatedFleet(t, tc.hosts, 3)
			out := renderString(t, tc.format, r, tc.opt)
			lines := strings.Split(strings.TrimSuffix(text.StripEscape(out), "\n"), "\n")
			if tc.maxLines > 0 && len(lines) > tc.maxLines {
				t.Errorf("%d lines, more than %d", len(lines), tc.maxLines)
			}
			for i, l := range lines {
				if w := text.StringWidthWithoutEscSequences(l); tc.opt.Width > 0 && w > tc.opt.Width {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, tc.opt.Width, l)
				}
			}
			checkGolden(t, tc.name, out)
		})
	}
}

// A fleet at or below GroupedAbove hosts renders exactly as the per-host
// report; one host more is grouped.
func TestGroupedThreshold(t *testing.T) {
	for _, n := range []int{GroupedAbove, GroupedAbove + 1} {
		r := simulatedFleet(t, n, 0)
		for _, format := range []string{"table", "markdown", "html"} {
			out := renderString(t, format, r, Options{Width: 120})
			grouped := strings.Contains(out, "What to fix first")
			if grouped != (n > GroupedAbove) {
				t.Errorf("%d hosts, %s: grouped = %v", n, format, grouped)
			}
		}
	}
}

// Every failing and unknown rule is named in every grouped format, and
// -v keeps every host's observed value.
func TestGroupedNamesEveryRule(t *testing.T) {
	r := simulatedFleet(t, 1000, 3)
	groups := r.GroupByRule(rules.Fail, rules.Unknown)
	if len(groups) < 20 {
		t.Fatalf("only %d failing or unknown rules in the simulated fleet", len(groups))
	}
	for _, v := range []struct {
		format string
		opt    Options
	}{{"table", Options{Width: 80}}, {"table", Options{Width: 120}}, {"markdown", Options{}}, {"html", Options{}}} {
		out := renderString(t, v.format, r, v.opt)
		for _, g := range groups {
			if !strings.Contains(out, g.Rule) {
				t.Errorf("%s %+v: rule %s (%s on %d hosts) not named", v.format, v.opt, g.Rule, g.Status, len(g.Hosts))
			}
		}
	}
	verbose := renderString(t, "table", r, Options{Width: 200, Verbose: true})
	for _, h := range r.Hosts {
		if !strings.Contains(verbose, h.Name) {
			t.Fatalf("-v does not name host %s", h.Name)
		}
	}
}

// The grouped page: every host reachable (a <details> with its anchor),
// every host's findings in the data, nothing fetched, sizes within the
// issue's bounds at 1,000 and 10,000 hosts.
func TestGroupedHTML(t *testing.T) {
	for _, tc := range []struct{ hosts, maxBytes int }{{1000, 3 << 20}, {10000, 20 << 20}} {
		r := simulatedFleet(t, tc.hosts, 3)
		out := renderString(t, "html", r, Options{})
		if len(out) > tc.maxBytes {
			t.Errorf("%d hosts: %d bytes, more than %d", tc.hosts, len(out), tc.maxBytes)
		}
		t.Logf("%d hosts: %d bytes", tc.hosts, len(out))
		ids := regexp.MustCompile(`<details class="h" data-h="(\d+)" id="host-([^"]+)">`).FindAllStringSubmatch(out, -1)
		if len(ids) != tc.hosts {
			t.Errorf("%d hosts, %d host entries with an anchor", tc.hosts, len(ids))
		}
		for _, m := range ids {
			var i int
			fmt.Sscan(m[1], &i)
			if r.Hosts[i].Name != m[2] {
				t.Fatalf("entry %s names %s, host %d is %s", m[1], m[2], i, r.Hosts[i].Name)
			}
		}
		for _, bad := range []string{"http://", "https://", "src=", "fetch(", "XMLHttpRequest", "<table class=\"matrix"} {
			if strings.Contains(strings.Split(out, `<section class="catalog">`)[0], bad) {
				t.Errorf("%d hosts: the page (before the catalog's references) contains %q", tc.hosts, bad)
			}
		}
	}
}

// The data a host's detail is built from: every finding that does not
// pass, with its observed value, reason and fix, each text stored once.
func TestGroupedHTMLData(t *testing.T) {
	r := simulatedFleet(t, 40, 2)
	v := buildGroupedView(r)
	seen := map[string]int{}
	for _, s := range v.Data.S {
		seen[s]++
		if seen[s] > 1 {
			t.Fatalf("text stored twice: %q", s)
		}
	}
	h := r.Hosts[0] // sim-00000-centos7; host 9 is sim-00009-down, unreachable
	dh := v.Data.H[0]
	if dh.N != h.Name || v.Data.S[dh.K] != kernelRelease(h.Facts) {
		t.Fatalf("host 0 is %q kernel %q", dh.N, v.Data.S[dh.K])
	}
	notPass := 0
	for _, f := range h.Findings {
		if f.Status != rules.Pass {
			notPass++
		}
	}
	if len(dh.F) != notPass || dh.Pass != len(h.Findings)-notPass {
		t.Fatalf("%d findings and %d passing in the data, want %d and %d", len(dh.F), dh.Pass, notPass, len(h.Findings)-notPass)
	}
	first := sortedFindings(h.Findings)[0]
	got := dh.F[0]
	if v.Data.S[got[0]] != first.Rule || v.Data.S[got[1]] != string(first.Status) || v.Data.S[got[3]] != first.Observed ||
		!strings.HasPrefix(v.Data.S[got[5]], first.Reason) || v.Data.S[got[6]] != first.Fix.Summary {
		t.Errorf("first finding in the data: %q, want %s %s observed %q", []string{v.Data.S[got[0]], v.Data.S[got[1]], v.Data.S[got[3]]}, first.Rule, first.Status, first.Observed)
	}
	if e := v.Data.H[9]; r.Hosts[9].Error == nil || e.E < 0 || !strings.HasPrefix(v.Data.S[e.E], "unreachable: ") {
		t.Errorf("host 9 (%s): error %d", r.Hosts[9].Name, e.E)
	}
}

// groupsFleet is a small fleet for the grouping's own tests: hosts with
// the given groups, failing and unknown rules.
type groupsHost struct {
	name, group, kernel string
	fail, unknown       []string
	err                 facts.ErrorKind
}

func groupsReport(hosts []groupsHost) *Report {
	r := &Report{}
	for _, gh := range hosts {
		h := Host{Name: gh.name, Groups: []string{gh.group}, Facts: &facts.Facts{Kernel: facts.Kernel{Release: gh.kernel}}}
		if gh.err != "" {
			h.Facts, h.Error = nil, &HostError{Kind: gh.err, Message: "no"}
		}
		for _, id := range gh.fail {
			h.Findings = append(h.Findings, rules.Finding{Rule: id, Status: rules.Fail, Severity: rules.High,
				Fix: &rules.Fix{Summary: "fix " + id, Sysctl: map[string]string{"net.core.somaxconn": "4096"}, Bounds: map[string]rules.Bound{"net.core.somaxconn": {Dir: rules.AtLeast}}}})
		}
		for _, id := range gh.unknown {
			h.Findings = append(h.Findings, rules.Finding{Rule: id, Status: rules.Unknown, Severity: rules.Medium})
		}
		r.Hosts = append(r.Hosts, h)
	}
	Summarize(r)
	return r
}

func TestGroups(t *testing.T) {
	r := groupsReport([]groupsHost{
		{name: "a1", group: "east", kernel: "5.4", fail: []string{"somaxconn"}},
		{name: "a2", group: "east", kernel: "5.10", fail: []string{"somaxconn"}},
		{name: "a3", group: "east", kernel: "5.4", fail: []string{"somaxconn"}, unknown: []string{"nic-ring"}},
		{name: "a4", group: "east", err: facts.KindUnreachable},
		{name: "a5", group: "east", kernel: "5.4"},
		{name: "b1", group: "west", kernel: "5.4", fail: []string{"somaxconn", "listen-overflows"}},
		{name: "b2", group: "west", err: facts.KindAuth},
		{name: "b3", group: "west", err: facts.KindUnreachable},
	})
	g := r.Groups()
	var got []string
	for _, c := range g.Clusters {
		for _, p := range c.Patterns {
			got = append(got, fmt.Sprintf("%s %v %q %q %q %v", c.Name, hostNames(r, p.Hosts), p.Fail, p.Unknown, p.ErrorKind, p.Kernels))
		}
	}
	want := []string{
		`east [a1 a2] ["somaxconn"] [] "" [5.10 5.4]`,
		`east [a3] ["somaxconn"] ["nic-ring"] "" [5.4]`,
		`east [a4] [] [] "unreachable" []`,
		`east [a5] [] [] "" [5.4]`,
		`west [b1] ["somaxconn" "listen-overflows"] [] "" [5.4]`,
		`west [b2] [] [] "auth" []`,
		`west [b3] [] [] "unreachable" []`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("patterns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e := g.Errors; len(e) != 2 || e[0].Kind != facts.KindUnreachable || len(e[0].Hosts) != 2 || e[1].Kind != facts.KindAuth {
		t.Errorf("errors by kind: %+v", e)
	}
	// One change (somaxconn) asked by two rules: one action, 4 hosts of 2 clusters.
	if len(g.Actions) != 1 {
		t.Fatalf("actions: %+v", g.Actions)
	}
	if s := g.Actions[0].Summary(); s != "raise net.core.somaxconn to 4096 on 4 hosts of 2 clusters: high, asked by 2 rules" {
		t.Errorf("action: %q", s)
	}
	counts := map[string][]int{}
	for _, rc := range g.Rules {
		counts[rc.Rule+" "+string(rc.Status)] = rc.PerCluster
	}
	if fmt.Sprint(counts) != "map[listen-overflows fail:[0 1] nic-ring unknown:[1 0] somaxconn fail:[3 1]]" {
		t.Errorf("rule × cluster counts: %v", counts)
	}
}

// Actions rank by severity weight × hosts: a critical change on 2 hosts
// (2 × 41) comes before a low one on 10 (10 × 5) and after a high one on
// 5 (5 × 21).
func TestActionRank(t *testing.T) {
	r := &Report{}
	add := func(n int, sev rules.Severity, key string) {
		for i := 0; i < n; i++ {
			r.Hosts = append(r.Hosts, Host{Name: fmt.Sprintf("%s-%d", key, i), Findings: []rules.Finding{{Rule: key, Status: rules.Fail, Severity: sev,
				Fix: &rules.Fix{Sysctl: map[string]string{key: "1"}}}}})
		}
	}
	add(10, rules.Low, "low.key")
	add(2, rules.Critical, "crit.key")
	add(5, rules.High, "high.key")
	var got []string
	for _, a := range r.Groups().Actions {
		got = append(got, a.Text)
	}
	if strings.Join(got, "; ") != "set high.key to 1; set crit.key to 1; set low.key to 1" {
		t.Errorf("ranked: %q", got)
	}
}

// The cluster a host is grouped in: the one scan --bootstrap proved, else
// its meta.properties' cluster.id, else its inventory groups: the restart
// verdict's (whatif) grouping.
func TestHostClusters(t *testing.T) {
	meta := &facts.Facts{Kafka: &facts.Kafka{LogDirs: []facts.LogDir{{Meta: &facts.MetaProperties{ClusterID: "M1"}}}}}
	rc := &Cluster{ID: "C1", Brokers: []ClusterBroker{{Host: "p", Proof: facts.ProofProven}, {Host: "u", Proof: "unproven"}}}
	proven := ProvenClusters(rc)
	for _, tc := range []struct {
		h    Host
		want string
	}{
		{Host{Name: "p", Groups: []string{"g"}, Facts: meta}, "cluster C1"},
		{Host{Name: "u", Groups: []string{"g"}, Facts: meta}, "cluster M1"},
		{Host{Name: "u", Groups: []string{"g", "h"}}, "g h"},
		{Host{Name: "x"}, Ungrouped},
	} {
		if got := strings.Join(HostClusters(&tc.h, proven), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.h.Name, got, tc.want)
		}
	}
}

// Rendering 10,000 simulated hosts, each grouped format: time, allocations
// and the bytes written (b.ReportMetric "bytes/op"). Compare runs with
// benchstat; no timing is asserted.
func BenchmarkGrouped10k(b *testing.B) {
	r := simulatedFleet(b, 10000, 12)
	for _, v := range []struct {
		format string
		opt    Options
	}{{"table", Options{Width: 120}}, {"markdown", Options{}}, {"html", Options{}}} {
		b.Run(v.format, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for i := 0; i < b.N; i++ {
				var cw countWriter
				if err := Render(&cw, v.format, r, v.opt); err != nil {
					b.Fatal(err)
				}
				n = int(cw)
			}
			b.ReportMetric(float64(n), "out-bytes")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// The cluster section of a grouped report counts the brokers and groups
// the cluster's findings by rule; -v and --hosts list every broker.
func TestGroupedCluster(t *testing.T) {
	r := simulatedFleet(t, 1000, 0)
	c := &Cluster{ID: "C1", Bootstrap: "b:9092"}
	for i, h := range r.Hosts {
		b := ClusterBroker{NodeID: int32(i), Advertised: fmt.Sprintf("10.0.%d.%d:9092", i/250, i%250), Host: h.Name, By: "name", Proof: facts.ProofProven}
		if i%100 == 99 {
			b.Host, b.Proof = "", ""
			c.Problems = append(c.Problems, ClusterProblem{Rule: "broker-unaudited", Severity: "high", NodeID: int32(i), Message: fmt.Sprintf("broker %d: in no inventory", i)})
		}
		c.Brokers = append(c.Brokers, b)
	}
	r.Cluster = c
	for _, v := range []struct {
		format string
		opt    Options
	}{{"table", Options{Width: 120}}, {"markdown", Options{}}} {
		out := renderString(t, v.format, r, v.opt)
		for _, want := range []string{"1000 brokers: 10 no audited host, 990 proven", "high broker-unaudited: broker 99: in no inventory (and 9 more like it)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q", v.format, want)
			}
		}
		if strings.Contains(out, "broker 500 10.0.2.0:9092") {
			t.Errorf("%s lists the brokers one by one", v.format)
		}
	}
	if !strings.Contains(renderString(t, "table", r, Options{Width: 120, Verbose: true}), "broker 500 10.0.2.0:9092") {
		t.Error("-v does not list every broker")
	}
}

// The grouped page's data is streamed (renderGroupedHTML): the page has
// the bytes html/template writes for {{.Data}} in the script element,
// hostile texts (a closing script tag, U+2028, &) included, exactly once.
func TestGroupedHTMLDataAsTemplateWrites(t *testing.T) {
	r := simulatedFleet(t, GroupedAbove+20, 3)
	r.Hosts[0].Name = "h\u2028</script><!--&x"
	r.Hosts[1].Findings[0].Reason = "a\u2029b <b>&amp; \"q\""
	r.Hosts[1].Findings[0].Status = rules.Fail
	tmpl := template.Must(template.New("d").Parse(`<script type="application/json" id="kaudit-data">{{.}}</script>`))
	var want bytes.Buffer
	if err := tmpl.Execute(&want, buildGroupedView(r).Data); err != nil {
		t.Fatal(err)
	}
	page := renderString(t, "html", r, Options{})
	if n := strings.Count(page, want.String()); n != 1 {
		t.Fatalf("the page has html/template's data %d times, want once; its script: %.300s", n, page[strings.Index(page, `id="kaudit-data"`):])
	}
	if strings.Contains(page, htmlDataMark) {
		t.Error("the data's mark is left in the page")
	}
}
