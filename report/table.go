package report

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

func init() { Register("table", renderTable) }

// palette colours terminal text. It writes escape codes itself (text.Escape)
// instead of text.Colors.Sprint, whose output depends on go-pretty's
// process-wide NO_COLOR/TERM detection: the caller decides through
// Options.Color, and with Color false no escape code is ever written.
type palette struct{ on bool }

// paint colours each line on its own, so that a colour never runs past
// the end of a line.
func (p palette) paint(s string, c ...text.Color) string {
	if !p.on || s == "" {
		return s
	}
	seq := text.Colors(c).EscapeSeq()
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = text.Escape(l, seq)
		}
	}
	return strings.Join(lines, "\n")
}

func (p palette) severity(sev rules.Severity, s string) string {
	switch sev {
	case rules.Critical:
		return p.paint(s, text.Bold, text.FgRed)
	case rules.High:
		return p.paint(s, text.FgRed)
	case rules.Medium:
		return p.paint(s, text.FgYellow)
	}
	return s
}

func (p palette) status(st rules.Status, s string) string {
	switch st {
	case rules.Pass:
		return p.paint(s, text.FgGreen)
	case rules.Fail, rules.Error:
		return p.paint(s, text.FgRed)
	case rules.Unknown, rules.Warn:
		return p.paint(s, text.FgYellow)
	}
	return s
}

func (p palette) bold(s string) string  { return p.paint(s, text.Bold) }
func (p palette) faint(s string) string { return p.paint(s, text.Faint) }
func (p palette) red(s string) string   { return p.paint(s, text.FgRed) }

// safe is how every string reaches the terminal table: whitespace folded
// onto one line, then anything a terminal would act on made visible.
func safe(s string) string { return termsafe.Line(oneLine(s)) }

// termReport writes the terminal report at a width.
type termReport struct {
	b     strings.Builder
	p     palette
	width int
}

// prose writes s wrapped at the width, later lines indented by indent.
func (t *termReport) prose(s string, indent int, paint func(string) string) {
	for _, l := range termui.Wrap(s, t.width, indent) {
		if paint != nil {
			l = paint(l)
		}
		t.b.WriteString(l + "\n")
	}
}

// parts writes parts joined by " · ", breaking between parts (not inside
// one) when the line would be wider than the width.
func (t *termReport) parts(parts []cell, indent int) {
	line, lineW := "", 0
	for _, pt := range parts {
		w := termui.StringWidth(pt.text)
		s := pt.text
		if pt.paint != nil {
			s = pt.paint(s)
		}
		switch {
		case line == "":
			line, lineW = s, w
		case t.width <= 0 || lineW+3+w <= t.width:
			line, lineW = line+" · "+s, lineW+3+w
		default:
			t.b.WriteString(line + "\n")
			line, lineW = strings.Repeat(" ", indent)+s, indent+w
		}
	}
	t.b.WriteString(line + "\n")
}

func (t *termReport) title(s string) { t.b.WriteString("\n" + t.p.bold(s) + "\n") }

// renderTable writes the terminal report: what was scanned, the fleet
// summary, one row per host, then the rules that fail or could not be
// proven safe: one line each by default, every host's detail with
// Verbose.
func renderTable(w io.Writer, r *Report, opt Options) error {
	t := &termReport{p: palette{on: opt.Color}, width: opt.Width}
	t.b.WriteString(t.p.bold(reportTitle) + "\n")
	scanned := fmt.Sprintf("scanned %s in %s by kaudit %s", scanTime(r), humanDuration(r.DurationMS), safe(cmp.Or(r.ToolVersion, "-")))
	if r.Inventory != "" {
		scanned += " · inventory " + safe(r.Inventory)
	}
	t.prose(scanned, 4, nil)
	if r.Interrupted {
		t.prose("scan interrupted: results are partial", 4, t.p.red)
	}
	t.parts(summaryParts(r, t.p), 4)

	switch {
	case r.Grouped() && !opt.Verbose:
		t.grouped(r, opt)
		t.clusterBrief(r.Cluster)
		t.more()
	case r.Grouped():
		t.grouped(r, opt)
		t.hosts(r)
		t.cluster(r.Cluster)
		t.verbose(r)
	default:
		t.hosts(r)
		t.cluster(r.Cluster)
		if opt.Verbose {
			t.verbose(r)
		} else {
			t.brief(r)
		}
	}
	_, err := io.WriteString(w, t.b.String())
	return err
}

// hosts writes the table of one row per host, and each error.
func (t *termReport) hosts(r *Report) {
	t.title("Hosts")
	t.b.WriteString(hostsGrid(r, t.p).render(t.width, t.p))
	for _, h := range errorHosts(r) {
		t.prose(safe(h.Name)+": error "+safe(string(h.Error.Kind))+": "+safe(h.Error.Message), 4, t.p.red)
	}
}

// summaryParts is the fleet summary, one part per fact.
func summaryParts(r *Report, p palette) []cell {
	s := r.Summary
	label, _ := verdict(r)
	parts := []cell{
		{text: label, paint: p.bold},
		plain(fmt.Sprintf("%s, %d audited, %s", words.Count(s.Hosts, "host", "hosts"), s.Audited, words.Count(s.Unreachable, "error", "errors"))),
		{text: "fleet score " + fleetScore(s), paint: p.bold},
	}
	var fails []string
	for _, sev := range rules.Severities() {
		n := s.FailBySeverity[string(sev)]
		item := fmt.Sprintf("%d %s", n, sev)
		if n > 0 {
			item = p.severity(sev, item)
		}
		fails = append(fails, item)
	}
	// The failing counts are coloured item by item: measure them plain.
	parts = append(parts, cell{text: "failing: " + text.StripEscape(strings.Join(fails, ", ")), paint: func(string) string {
		return "failing: " + strings.Join(fails, ", ")
	}})
	unk := cell{text: fmt.Sprintf("%d unknown (not proven safe)", s.StatusCounts[string(rules.Unknown)])}
	if s.StatusCounts[string(rules.Unknown)] > 0 {
		unk.paint = func(x string) string { return p.status(rules.Unknown, x) }
	}
	parts = append(parts, unk)
	if n := s.StatusCounts[string(rules.Waived)]; n > 0 {
		parts = append(parts, plain(fmt.Sprintf("%d waived", n)))
	}
	return parts
}

// hostsGrid has one row per host; a host that could not be audited says
// so in its score column, and its error follows the table.
func hostsGrid(r *Report, p palette) *grid {
	g := &grid{cols: []column{
		{head: "HOST", min: 12, wrap: true},
		{head: "SCORE", right: true},
		{head: "CRIT", right: true},
		{head: "HIGH", right: true},
		{head: "MED", right: true},
		{head: "LOW", right: true},
		{head: "UNKNOWN", short: "UNK", right: true},
		{head: "KERNEL", min: 10, wrap: true},
		{head: "KAFKA", min: 6, wrap: true},
		{head: "BACKLOG", right: true},
	}}
	faint := cell{text: "0", paint: p.faint}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Error != nil {
			dash := plain("-")
			g.add(plain(safe(h.Name)), cell{text: "error", paint: p.red}, dash, dash, dash, dash, dash, plain("not audited"), dash, dash)
			continue
		}
		c := countHost(h)
		unknown := faint
		if c.Unknown > 0 {
			unknown = cell{text: strconv.Itoa(c.Unknown), paint: func(s string) string { return p.status(rules.Unknown, s) }}
		}
		g.add(plain(safe(h.Name)), scoreCell(h, c, p),
			countCell(c, rules.Critical, p), countCell(c, rules.High, p), countCell(c, rules.Medium, p), countCell(c, rules.Low, p),
			unknown, plain(safe(kernelRelease(h.Facts))), plain(safe(kafkaVersion(h.Facts))), plain(effectiveBacklog(h.Facts)))
	}
	return g
}

// scoreCell colours a host's score by its worst failure: green when
// nothing fails and nothing is unknown.
func scoreCell(h *Host, c hostCounts, p palette) cell {
	s := strconv.Itoa(h.Score)
	switch {
	case c.Fail[rules.Critical]+c.Fail[rules.High] > 0:
		return cell{text: s, paint: p.red}
	case c.failures() > 0 || c.Unknown > 0 || c.Error > 0:
		return cell{text: s, paint: func(x string) string { return p.severity(rules.Medium, x) }}
	}
	return cell{text: s, paint: func(x string) string { return p.status(rules.Pass, x) }}
}

func countCell(c hostCounts, sev rules.Severity, p palette) cell {
	n := c.Fail[sev]
	if n == 0 {
		return cell{text: "0", paint: p.faint}
	}
	return cell{text: strconv.Itoa(n), paint: func(s string) string { return p.severity(sev, s) }}
}

// clusterBrief prints the cluster of a grouped report: its brokers
// counted, its findings grouped by rule (-v lists every broker).
func (t *termReport) clusterBrief(c *Cluster) {
	if c == nil {
		return
	}
	t.title("Cluster")
	t.prose(safe(clusterHeading(c)), 4, nil)
	if q := clusterQuorumLine(c); q != "" {
		t.prose(safe(q), 4, nil)
	}
	t.prose(clusterBrokerCounts(c)+" (-v lists each broker)", 4, nil)
	for _, l := range clusterProblemLines(c) {
		t.prose(safe(l), 4, nil)
	}
}

// cluster prints the cluster as Kafka described it (scan --bootstrap).
func (t *termReport) cluster(c *Cluster) {
	if c == nil {
		return
	}
	t.title("Cluster")
	t.prose(safe(clusterHeading(c)), 4, nil)
	if q := clusterQuorumLine(c); q != "" {
		t.prose(safe(q), 4, nil)
	}
	for _, b := range c.Brokers {
		line := clusterBrokerLine(b)
		if k := clusterKafkaLine(b); k != "" {
			line += "; " + k
		}
		if cfg := clusterConfigLine(b); cfg != "" {
			line += "; running: " + cfg
		}
		t.prose(safe(line), 6, nil)
	}
	for _, p := range c.Problems {
		t.prose(safe(p.Label()+" "+p.Rule+": "+p.Message+waivedBy(p)), 4, nil)
	}
}
