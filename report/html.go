package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("html", renderHTML) }

// The page is one self-contained file: inline CSS, no script, nothing
// fetched. html/template escapes every value from the report, and every
// string from a host is made visible with termsafe first (html/template
// lets control characters and bidi overrides through).
//
//go:embed templates/report.html.tmpl
var htmlTemplateText string

// The grouped page (html_grouped.go) shares the page's style.
//
//go:embed templates/grouped.html.tmpl
var groupedTemplateText string

var htmlTemplate = template.Must(template.Must(template.New("report").Parse(htmlTemplateText)).New("grouped").Parse(groupedTemplateText))

type htmlView struct {
	Title       string
	Generated   string
	Tool        string
	Duration    string
	Inventory   string
	FailOn      string
	Interrupted bool

	VerdictLabel string
	VerdictClass string
	Verdict      string

	Summary    Summary
	ScoreText  string
	MinScore   string
	FailCounts []htmlCount
	Unknown    int

	MatrixHosts []htmlMatrixHost
	Rules       []htmlRuleRow
	Hosts       []htmlHost
	// Catalog is the appendix: every rule the report mentions, with its
	// rationale and references (the findings link to it).
	Catalog []htmlCatalogRule
	// Cluster is the cluster as Kafka described it (scan --bootstrap).
	Cluster *htmlCluster
}

type htmlCluster struct {
	Heading  string
	Quorum   string
	Brokers  []htmlClusterBroker
	Problems []ClusterProblem
}

type htmlClusterBroker struct {
	NodeID                                  int32
	Advertised, Host, Proof, Kafka, Configs string
}

func htmlClusterOf(c *Cluster) *htmlCluster {
	if c == nil {
		return nil
	}
	v := &htmlCluster{Heading: termsafe.Line(clusterHeading(c)), Quorum: termsafe.Line(clusterQuorumLine(c))}
	for _, b := range c.Brokers {
		proof := string(b.Proof)
		if b.Host != "" {
			proof += " (by " + b.By + "): " + b.Detail
		}
		v.Brokers = append(v.Brokers, htmlClusterBroker{NodeID: b.NodeID, Advertised: termsafe.Line(b.Advertised),
			Host: termsafe.Line(cmp.Or(b.Host, "-")), Proof: termsafe.Line(cmp.Or(proof, "-")),
			Kafka: termsafe.Line(cmp.Or(clusterKafkaLine(b), "-")), Configs: termsafe.Line(cmp.Or(clusterConfigLine(b), "-"))})
	}
	for _, p := range c.Problems {
		p.Rule, p.Severity, p.Host, p.Message, p.Waived = termsafe.Line(p.Rule), termsafe.Line(p.Severity), termsafe.Line(p.Host), termsafe.Line(p.Message), termsafe.Line(p.Waived)
		v.Problems = append(v.Problems, p)
	}
	return v
}

type htmlCatalogRule struct {
	ID, Anchor, Title, Severity, Rationale, Fix string
	References                                  []rules.Reference
}

func ruleAnchor(id string) string { return "rule-" + id }

type htmlCount struct {
	Severity string
	N        int
}

type htmlMatrixHost struct {
	Name   string
	Anchor string
	Error  bool
}

type htmlRuleRow struct {
	ID    string
	Title string
	Cells []htmlCell
}

type htmlCell struct {
	Class string // status-<status> or status-none
	Text  string
	Title string
	Href  string
}

type htmlHost struct {
	Name       string
	Anchor     string
	Address    string
	Groups     string
	Error      *HostError
	Score      int
	ScoreClass string
	Deductions []Deduction
	Floored    bool // the deductions add up to more than 100
	Duration   string
	Kernel     string
	OS         string
	Kafka      string
	Backlog    string
	Gaps       []string
	Findings   []htmlFinding
}

type htmlFinding struct {
	Anchor   string
	Rule     string
	Title    string
	Status   string
	Severity string
	Observed string
	Expected string
	Reason   string
	Source   string // which evidence decided (rules.Source*), "" for most rules
	Fix      string
	Evidence []string
}

func hostAnchor(name string) string { return "host-" + termsafe.Line(name) }

// safeHostError is e with its text made visible (termsafe): html/template
// escapes markup, not terminal controls or bidi overrides.
func safeHostError(e *HostError) *HostError {
	if e == nil {
		return nil
	}
	return &HostError{Kind: facts.ErrorKind(termsafe.Line(string(e.Kind))), Message: termsafe.Block(e.Message)}
}

func renderHTML(w io.Writer, r *Report, _ Options) error {
	if r.Grouped() {
		return renderGroupedHTML(w, buildGroupedView(r))
	}
	return htmlTemplate.ExecuteTemplate(w, "report", buildHTMLView(r))
}

func buildHTMLView(r *Report) htmlView {
	v := htmlHead(r)

	// Matrix: rules in the order findings carry them, one column per host.
	byHost := make([]map[string]rules.Finding, len(r.Hosts))
	for i, h := range r.Hosts {
		v.MatrixHosts = append(v.MatrixHosts, htmlMatrixHost{Name: termsafe.Line(h.Name), Anchor: hostAnchor(h.Name), Error: h.Error != nil})
		byHost[i] = map[string]rules.Finding{}
		for _, f := range h.Findings {
			if _, dup := byHost[i][f.Rule]; !dup {
				byHost[i][f.Rule] = f
			}
		}
	}
	titles := ruleTitles(r)
	for _, id := range ruleOrder(r) {
		row := htmlRuleRow{ID: termsafe.Line(id), Title: termsafe.Line(titles[id])}
		for i, h := range r.Hosts {
			row.Cells = append(row.Cells, matrixCell(h, byHost[i], id))
		}
		v.Rules = append(v.Rules, row)
	}

	for i := range r.Hosts {
		v.Hosts = append(v.Hosts, buildHTMLHost(&r.Hosts[i]))
	}
	return v
}

// htmlHead is the page's header, verdict, summary and rule catalog, of
// both the per-host page and the grouped one.
func htmlHead(r *Report) htmlView {
	s := r.Summary
	label, detail := verdict(r)
	v := htmlView{
		Title:        reportTitle,
		Generated:    scanTime(r),
		Tool:         termsafe.Line(cmp.Or(r.ToolVersion, "-")),
		Duration:     humanDuration(r.DurationMS),
		Inventory:    termsafe.Line(r.Inventory),
		FailOn:       r.FailOn,
		Interrupted:  r.Interrupted,
		VerdictLabel: label,
		VerdictClass: "verdict-" + strings.ReplaceAll(strings.ToLower(label), " ", "-"),
		Verdict:      detail,
		Summary:      s,
		ScoreText:    "n/a",
		MinScore:     "n/a",
		Unknown:      s.StatusCounts[string(rules.Unknown)],
		Cluster:      htmlClusterOf(r.Cluster),
	}
	if s.Audited > 0 {
		v.ScoreText = fmt.Sprint(s.Score)
		v.MinScore = fmt.Sprint(s.MinScore)
	}
	for _, sev := range rules.Severities() {
		v.FailCounts = append(v.FailCounts, htmlCount{Severity: string(sev), N: s.FailBySeverity[string(sev)]})
	}
	for _, id := range ruleOrder(r) {
		if cr, ok := rules.Lookup(id); ok {
			v.Catalog = append(v.Catalog, htmlCatalogRule{ID: cr.ID, Anchor: ruleAnchor(cr.ID), Title: cr.Title,
				Severity: string(cr.Severity), Rationale: strings.TrimSpace(cr.Rationale), Fix: strings.TrimSpace(cr.Fix), References: cr.References})
		}
	}
	return v
}

func matrixCell(h Host, findings map[string]rules.Finding, rule string) htmlCell {
	if h.Error != nil {
		return htmlCell{Class: "status-none", Text: "–", Title: termsafe.Line(h.Name + " not audited: " + string(h.Error.Kind))}
	}
	f, ok := findings[rule]
	if !ok {
		return htmlCell{Class: "status-none", Text: "–", Title: termsafe.Line("no finding for " + rule + " on " + h.Name)}
	}
	title := fmt.Sprintf("%s on %s: %s (%s)", rule, h.Name, f.Status, f.Severity)
	for _, l := range [][2]string{{"\nobserved: ", f.Observed}, {"\nexpected: ", f.Expected}, {"\n", f.Reason}, {"\ndecided by: ", string(f.Source)}} {
		if l[1] != "" {
			title += l[0] + l[1]
		}
	}
	return htmlCell{
		Class: "status-" + string(f.Status),
		Text:  string(f.Status),
		Title: termsafe.Block(title),
		Href:  "#" + findingAnchor(h.Name, rule),
	}
}

func findingAnchor(host, rule string) string { return hostAnchor(host) + "-" + termsafe.Line(rule) }

func buildHTMLHost(h *Host) htmlHost {
	out := htmlHost{
		Name:       termsafe.Line(h.Name),
		Anchor:     hostAnchor(h.Name),
		Address:    termsafe.Line(h.Address),
		Groups:     termsafe.Line(strings.Join(h.Groups, ", ")),
		Error:      safeHostError(h.Error),
		Score:      h.Score,
		Deductions: h.Deductions,
		Duration:   humanDuration(h.DurationMS),
		Kernel:     termsafe.Line(kernelRelease(h.Facts)),
		Kafka:      termsafe.Line(kafkaVersion(h.Facts)),
		Backlog:    effectiveBacklog(h.Facts),
		Floored:    deducted(h) > 100,
		ScoreClass: hostScoreClass(h),
	}
	if f := h.Facts; f != nil {
		out.OS = termsafe.Line(osDescription(f.Kernel))
		if f.Kafka != nil && f.Kafka.Config != "" {
			out.Kafka += " · " + termsafe.Line(f.Kafka.Config)
		}
		for _, gap := range sectionGaps(f.Sections) {
			out.Gaps = append(out.Gaps, termsafe.Line(gap))
		}
	}
	for _, f := range sortedFindings(h.Findings) {
		out.Findings = append(out.Findings, buildHTMLFinding(h.Name, f))
	}
	return out
}

// deducted is the sum of a host's deductions (the score floors at 0).
func deducted(h *Host) int {
	total := 0
	for _, d := range h.Deductions {
		total += d.Points
	}
	return total
}

// hostScoreClass colours a host's score: bad for an error or a critical or
// high failure, warn for any other failure, unknown or error, else good.
func hostScoreClass(h *Host) string {
	c := countHost(h)
	switch {
	case h.Error != nil || c.Fail[rules.Critical]+c.Fail[rules.High] > 0:
		return "bad"
	case c.failures()+c.Unknown+c.Error > 0:
		return "warn"
	default:
		return "good"
	}
}

// buildHTMLFinding is one finding of host, made safe to render.
func buildHTMLFinding(host string, f rules.Finding) htmlFinding {
	hf := htmlFinding{
		Anchor:   findingAnchor(host, f.Rule),
		Rule:     termsafe.Line(f.Rule),
		Title:    termsafe.Line(f.Title),
		Status:   string(f.Status),
		Severity: string(f.Severity),
		Observed: termsafe.Line(f.Observed),
		Expected: termsafe.Line(f.Expected),
		Reason:   termsafe.Block(f.Reason),
		Source:   termsafe.Line(string(f.Source)),
	}
	for _, e := range f.Evidence {
		hf.Evidence = append(hf.Evidence, termsafe.Block(e))
	}
	if f.Fix != nil && f.Status != rules.Pass {
		hf.Fix = termsafe.Block(f.Fix.Summary)
		if f.Fix.Restart && !strings.Contains(strings.ToLower(f.Fix.Summary), "restart") {
			hf.Fix += " (broker restart required)"
		}
	}
	return hf
}

// osDescription is the distribution and, where the host shows it, the
// upstream kernel version (Ubuntu signature).
func osDescription(k facts.Kernel) string {
	parts := []string{}
	switch {
	case k.Pretty != "":
		parts = append(parts, k.Pretty)
	case k.Distro != "":
		parts = append(parts, strings.TrimSpace(k.Distro+" "+k.DistroVer))
	}
	if k.Signature != "" {
		parts = append(parts, k.Signature)
	}
	if k.Arch != "" {
		parts = append(parts, k.Arch)
	}
	return strings.Join(parts, " · ")
}

// sectionGaps lists the gather sections that were incomplete, sorted.
func sectionGaps(secs map[string]facts.SectionStatus) []string {
	var out []string
	for name, st := range secs {
		s := name + ": " + string(st.State)
		if st.Message != "" {
			s += " (" + st.Message + ")"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
