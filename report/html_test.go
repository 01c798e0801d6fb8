package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// The page must work offline: no link, script or img tag may point at the
// network, and nothing else may be fetched (CSS url(), @import).
func TestHTMLOffline(t *testing.T) {
	out := renderString(t, "html", loadFixture(t), Options{})
	tag := regexp.MustCompile(`(?is)<(link|script|img|iframe|source|embed|object)\b[^>]*>`)
	attr := regexp.MustCompile(`(?is)\b(src|href|data|srcset)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)
	for _, m := range tag.FindAllString(out, -1) {
		for _, a := range attr.FindAllStringSubmatch(m, -1) {
			v := strings.ToLower(a[2])
			if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.HasPrefix(strings.Trim(v, `"'`), "//") {
				t.Errorf("tag fetches from the network: %s", m)
			}
		}
	}
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "<link", "<img", "@import", "url("} {
		if strings.Contains(lower, bad) {
			t.Errorf("html contains %q", bad)
		}
	}
	// The only URLs are the rules' references: plain links a reader may
	// follow, never loaded by the page.
	links := regexp.MustCompile(`(?i)<a href="https?://[^"]*">`)
	if rest := links.ReplaceAllString(lower, ""); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
		t.Error("html contains a URL outside a reference link")
	}
}

func TestHTMLStructure(t *testing.T) {
	out := renderString(t, "html", loadFixture(t), Options{})
	for _, want := range []string{
		"<!DOCTYPE html>", "@media print", "<style>",
		`id="host-kafka-a1"`, `id="host-kafka-b1"`, `id="host-kafka-c1"`, `id="host-kafka-d1"`,
		`<a href="#host-kafka-a1">kafka-a1</a>`,
		`<p class="hosterror"><strong>timeout:</strong> connect to 10.0.4.41:22: i/o timeout after 10s</p>`,
		`class="cell status-unknown"`, `class="cell status-fail"`, `class="cell status-pass"`, `class="cell status-warn"`, `class="cell status-skip"`,
		`<div class="big">58</div>`,
		"ss: command not found", // gather gaps shown for the host with unknowns
		// every finding links to the rule's rationale and references
		`<a href="#rule-kernel-synack-wscale"`, `id="rule-kernel-synack-wscale"`,
		`href="https://github.com/torvalds/linux/commit/909172a149749242990a6e64cb55d55460d4e417"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("html lacks %s", want)
		}
	}
	// Matrix rows follow the findings' (catalog) order.
	first := strings.Index(out, "<code>kernel-synack-wscale</code>")
	last := strings.Index(out, "<code>nic-offload</code>")
	if first < 0 || last < 0 || first > last {
		t.Error("matrix rows not in catalog order")
	}
	// A matrix cell carries observed/expected in its title.
	if !strings.Contains(out, `title="somaxconn on kafka-a1: fail (medium)`+"\nobserved: 128\nexpected: &gt;= 4096") {
		t.Error("matrix cell title lacks observed/expected")
	}
	// kafka-a1's section lists findings by severity, then status: the
	// critical fail first, then high fails before the high passes.
	sec := out[strings.Index(out, `id="host-kafka-a1"`):strings.Index(out, `id="host-kafka-b1"`)]
	order := []string{"host-kafka-a1-kernel-synack-wscale", "host-kafka-a1-syncookies-fired", "host-kafka-a1-tcp-timestamps",
		"host-kafka-a1-listen-overflows", "host-kafka-a1-kafka-backlog-config", "host-kafka-a1-syn-backlog", "host-kafka-a1-congestion-control"}
	prev := -1
	for _, id := range order {
		i := strings.Index(sec, `id="`+id+`"`)
		if i < prev {
			t.Errorf("%s out of order in the host section", id)
		}
		prev = i
	}
}

func TestHTMLEscapes(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, ToolVersion: `"><script>x</script>`, Hosts: []Host{
		{Name: `evil"<h>`, Findings: []rules.Finding{{Rule: "r<1>", Title: "<b>t</b>", Status: rules.Fail, Severity: rules.High,
			Observed: `<img src=x onerror=alert(1)>`, Expected: "a&b", Reason: "</td></tr></table>",
			Fix: &rules.Fix{Summary: `javascript:alert(1)`}}}},
		{Name: "down", Error: &HostError{Kind: facts.KindProtocol, Message: "<garbage>"}},
	}}
	Summarize(r)
	out := renderString(t, "html", r, Options{})
	for _, bad := range []string{"<script>x", "<img src=x", "<b>t</b>", "</td></tr></table>", "<garbage>", `evil"<h>`} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped %q in html", bad)
		}
	}
	if !strings.Contains(out, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Error("observed value not shown escaped")
	}
}
