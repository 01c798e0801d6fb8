package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/rules"
)

// The HTML page of a fleet of more than GroupedAbove hosts: the first
// screen is the verdict, the actions ranked and the rule × cluster heat
// map; then the hosts by cluster and failure pattern, every host a
// collapsed <details>. A host's findings are not written out host by
// host (that was 34.6 MB at 1,000 hosts): they travel once as data (each
// distinct text once, htmlData) and a short inline script builds a host's
// table when it is opened. Nothing is fetched.

// maxHeatClusters caps the heat map's cluster columns (the page must not
// scroll sideways); the rest are summed in one column.
const maxHeatClusters = 10

type groupedView struct {
	htmlView
	Actions []htmlAction // the first maxActions
	// MoreActions are the rest, collapsed; MoreStart is the first one's number.
	MoreActions []htmlAction
	MoreStart   int
	Clusters    []string // the heat map's columns
	Heat        []htmlHeatRow
	Groups      []htmlClusterGroup
	Errors      string
	Data        htmlData // streamed where the page has DataMark (renderGroupedHTML)
}

// htmlDataMark is what the template prints for the data (DataMark), in
// one write, which renderGroupedHTML replaces with the data's JSON.
const htmlDataMark = "/*kaudit-data*/"

// DataMark is the place of the data in the page (htmlDataMark).
func (groupedView) DataMark() template.JS { return htmlDataMark }

// renderGroupedHTML executes the grouped template with the data's JSON
// streamed in place of DataMark: the bytes html/template writes for
// {{.Data}} (json.Marshal's, U+2028 and U+2029 escaped as it does too),
// never held whole; for 10,000 hosts html/template held ≈ 4 copies of
// 23 MB.
func renderGroupedHTML(w io.Writer, v groupedView) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	sw := &dataSplicer{w: bw, data: &v.Data}
	if err := htmlTemplate.ExecuteTemplate(sw, "grouped", v); err != nil {
		return err
	}
	if sw.err != nil {
		return sw.err
	}
	if !sw.done {
		return fmt.Errorf("report: the HTML template did not write the data's place (kaudit bug)")
	}
	return bw.Flush()
}

// dataSplicer passes writes on, but the one write that is htmlDataMark,
// which it replaces with the data's JSON.
type dataSplicer struct {
	w    io.Writer
	data *htmlData
	done bool
	err  error
}

func (s *dataSplicer) Write(p []byte) (int, error) {
	if s.done || string(p) != htmlDataMark {
		return s.w.Write(p)
	}
	s.done = true
	if s.err = s.data.writeJSON(s.w); s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// writeJSON writes json.Marshal(d)'s bytes, one element at a time.
func (d *htmlData) writeJSON(w io.Writer) error {
	var err error
	put := func(b []byte) {
		if err == nil {
			_, err = w.Write(b)
		}
	}
	put([]byte(`{"s":`))
	writeJSONArray(d.S, put, &err)
	put([]byte(`,"c":`))
	writeJSONArray(d.C, put, &err)
	put([]byte(`,"a":`))
	writeJSONArray(d.A, put, &err)
	put([]byte(`,"h":`))
	writeJSONArray(d.H, put, &err)
	put([]byte(`}`))
	return err
}

// writeJSONArray puts json.Marshal(xs)'s bytes, one element at a time;
// an element that cannot be encoded sets *err.
func writeJSONArray[T any](xs []T, put func([]byte), err *error) {
	if xs == nil {
		put([]byte("null"))
		return
	}
	put([]byte("["))
	for i, x := range xs {
		if i > 0 {
			put([]byte(","))
		}
		b, e := json.Marshal(x)
		if e != nil && *err == nil {
			*err = e
		}
		put(b)
	}
	put([]byte("]"))
}

type htmlAction struct {
	Index    int
	Severity string
	Summary  string
	Rules    []string
}

type htmlHeatRow struct {
	Rule, Status, Severity string
	Total                  int
	Cells                  []htmlHeat
}

type htmlHeat struct {
	N     int
	Class string // h0 … h4: the share of the cluster's hosts
	Title string
}

type htmlClusterGroup struct {
	Name, Size string
	Patterns   []htmlPattern
}

type htmlPattern struct {
	What, Class, Rules, Shared, Example string
	Hosts                               []htmlHostRef
}

type htmlHostRef struct {
	I      int
	Name   string
	Anchor string // "" when the host was listed before (in another group)
}

// htmlData is what the script renders hosts from: S holds each distinct
// text once, the hosts refer to it by index.
type htmlData struct {
	S []string    `json:"s"`
	C []string    `json:"c"` // cluster names
	A [][]int     `json:"a"` // each action's hosts
	H []htmlDHost `json:"h"`
	t map[string]int
}

// htmlDHost is one host: name, address, clusters, kernel, Kafka, score,
// error, the rules that pass (a count) and the others, each as [rule,
// status, severity, observed, expected, reason, fix] indices into S.
type htmlDHost struct {
	N    string   `json:"n"`
	Addr int      `json:"ad"`
	C    []int    `json:"c"`
	K    int      `json:"k"`
	V    int      `json:"v"`
	Sc   int      `json:"sc"`
	E    int      `json:"e"` // -1: audited
	Pass int      `json:"p"`
	F    [][7]int `json:"f"`
}

// text is s's index in S, added once.
func (d *htmlData) text(s string) int {
	if i, ok := d.t[s]; ok {
		return i
	}
	d.t[s] = len(d.S)
	d.S = append(d.S, s)
	return len(d.S) - 1
}

func buildGroupedView(r *Report) groupedView {
	g := r.Groups()
	v := groupedView{htmlView: htmlHead(r), Data: htmlData{t: map[string]int{}}}
	for k, a := range g.Actions {
		ha := htmlAction{Index: k, Severity: string(a.Severity), Summary: termsafe.Line(a.Summary()), Rules: a.Rules}
		if k < maxActions {
			v.Actions = append(v.Actions, ha)
		} else {
			v.MoreActions = append(v.MoreActions, ha)
		}
		v.Data.A = append(v.Data.A, a.Hosts)
	}
	v.MoreStart = maxActions + 1
	v.heat(g)
	if len(g.Errors) > 0 {
		v.Errors = termsafe.Line(errorSummary(g.Errors))
	}
	listed := map[int]bool{}
	for _, c := range g.Clusters {
		v.Data.C = append(v.Data.C, termsafe.Line(c.Name))
		hc := htmlClusterGroup{Name: termsafe.Line(c.Name), Size: clusterSize(c)}
		for _, p := range c.Patterns {
			hc.Patterns = append(hc.Patterns, htmlPatternOf(r, p, listed))
		}
		v.Groups = append(v.Groups, hc)
	}
	member := make([][]int, len(r.Hosts))
	for ci, c := range g.Clusters {
		for _, i := range c.Hosts {
			member[i] = append(member[i], ci)
		}
	}
	for i := range r.Hosts {
		v.Data.H = append(v.Data.H, v.Data.host(&r.Hosts[i], member[i]))
	}
	return v
}

// heat fills the heat map: each failing or unknown rule's hosts per
// cluster, shaded by their share of the cluster.
func (v *groupedView) heat(g FleetGroups) {
	shown := min(len(g.Clusters), maxHeatClusters)
	for _, c := range g.Clusters[:shown] {
		v.Clusters = append(v.Clusters, termsafe.Line(c.Name))
	}
	restHosts := 0
	for _, c := range g.Clusters[shown:] {
		restHosts += len(c.Hosts)
	}
	if shown < len(g.Clusters) {
		v.Clusters = append(v.Clusters, fmt.Sprintf("%d more clusters", len(g.Clusters)-shown))
	}
	for _, rc := range g.Rules {
		row := htmlHeatRow{Rule: termsafe.Line(rc.Rule), Status: ruleStatusWord(rc), Severity: string(rc.Severity), Total: len(rc.Hosts)}
		rest := 0
		for c, n := range rc.PerCluster {
			if c < shown {
				row.Cells = append(row.Cells, heatCell(n, len(g.Clusters[c].Hosts), v.Clusters[c]))
			} else {
				rest += n
			}
		}
		if shown < len(g.Clusters) {
			row.Cells = append(row.Cells, heatCell(rest, restHosts, v.Clusters[shown]))
		}
		v.Heat = append(v.Heat, row)
	}
}

func heatCell(n, of int, cluster string) htmlHeat {
	class := "h0"
	switch share := float64(n) / float64(max(of, 1)); {
	case n == 0:
	case share < 0.1:
		class = "h1"
	case share < 0.4:
		class = "h2"
	case share < 0.8:
		class = "h3"
	default:
		class = "h4"
	}
	return htmlHeat{N: n, Class: class, Title: fmt.Sprintf("%d of %d hosts of %s", n, of, cluster)}
}

func htmlPatternOf(r *Report, p Pattern, listed map[int]bool) htmlPattern {
	hp := htmlPattern{What: patternWhat(p), Rules: termsafe.Line(patternRules(p)), Shared: termsafe.Line(patternShared(p)),
		Example: termsafe.Line(r.Hosts[p.Hosts[0]].Name)}
	switch {
	case p.ErrorKind != "" || p.Worst.Rank() >= rules.High.Rank():
		hp.Class = "bad"
	case !p.Clean():
		hp.Class = "warn"
	default:
		hp.Class = "good"
	}
	hp.What = termsafe.Line(hp.What)
	for _, i := range p.Hosts {
		ref := htmlHostRef{I: i, Name: termsafe.Line(r.Hosts[i].Name)}
		if !listed[i] {
			listed[i] = true
			ref.Anchor = hostAnchor(r.Hosts[i].Name)
		}
		hp.Hosts = append(hp.Hosts, ref)
	}
	return hp
}

// host is h as data: every string made visible (termsafe) and stored once.
func (d *htmlData) host(h *Host, clusters []int) htmlDHost {
	dh := htmlDHost{N: termsafe.Line(h.Name), Addr: d.text(termsafe.Line(h.Address)), C: clusters, Sc: h.Score, E: -1, F: [][7]int{},
		K: d.text(termsafe.Line(kernelRelease(h.Facts))), V: d.text(termsafe.Line(kafkaVersion(h.Facts)))}
	if h.Error != nil {
		dh.E = d.text(termsafe.Line(string(h.Error.Kind) + ": " + h.Error.Message))
		return dh
	}
	for _, f := range sortedFindings(h.Findings) {
		if f.Status == rules.Pass {
			dh.Pass++
			continue
		}
		hf := buildHTMLFinding(h.Name, f)
		reason := hf.Reason
		if hf.Source != "" {
			reason += " (decided by: " + hf.Source + ")"
		}
		if len(hf.Evidence) > 0 {
			reason += "\n" + strings.Join(hf.Evidence, "\n")
		}
		dh.F = append(dh.F, [7]int{d.text(hf.Rule), d.text(hf.Status), d.text(hf.Severity), d.text(hf.Observed),
			d.text(hf.Expected), d.text(reason), d.text(hf.Fix)})
	}
	return dh
}
