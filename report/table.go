package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/rules"
)

func init() { Register("table", renderTable) }

// palette colours terminal text. It writes escape codes itself (text.Escape)
// instead of text.Colors.Sprint, whose output depends on go-pretty's
// process-wide NO_COLOR/TERM detection: the caller decides through
// Options.Color, and with Color false no escape code is ever written.
type palette struct{ on bool }

// paint colours each line on its own, so that the table borders between
// the lines of a wrapped cell keep their colour.
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

// renderTable writes the terminal report: a fleet summary line, one row
// per host, failing findings grouped by rule, then the rules that could
// not be proven safe.
func renderTable(w io.Writer, r *Report, opt Options) error {
	p := palette{on: opt.Color}
	var b strings.Builder

	b.WriteString(p.bold(reportTitle) + "\n")
	fmt.Fprintf(&b, "scanned %s in %s by kaudit %s", scanTime(r), humanDuration(r.DurationMS), orDash(r.ToolVersion))
	if r.Inventory != "" {
		fmt.Fprintf(&b, " · inventory %s", r.Inventory)
	}
	b.WriteString("\n")
	if r.Interrupted {
		b.WriteString(p.paint("scan interrupted: results are partial", text.FgRed) + "\n")
	}
	b.WriteString(tableSummaryLine(r, p) + "\n\n")

	b.WriteString(p.bold("Hosts") + "\n")
	b.WriteString(hostsTable(r, p) + "\n")

	fails := r.GroupByRule(rules.Fail)
	b.WriteString("\n" + p.bold("Failing rules") + "\n")
	if len(fails) == 0 {
		b.WriteString(p.status(rules.Pass, "none: no rule fails on any audited host") + "\n")
	} else {
		b.WriteString(groupTable(fails, p, true) + "\n")
	}

	unknown := r.GroupByRule(rules.Unknown)
	if len(unknown) > 0 {
		b.WriteString("\n" + p.bold("Not proven safe (unknown)") + "\n")
		b.WriteString("kaudit could not settle these rules from the facts it gathered: treat them as unsafe until checked.\n")
		b.WriteString(groupTable(unknown, p, false) + "\n")
	}
	if waived := r.GroupByRule(rules.Waived); len(waived) > 0 {
		b.WriteString("\n" + p.bold("Waived (accepted by a waiver: not in the score or exit code)") + "\n")
		b.WriteString(groupTable(waived, p, false) + "\n")
	}
	b.WriteString(p.faint("Full reasons and fixes: --format json, markdown or html; rationale and references: kaudit explain RULE.") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// tableSummaryLine is the one-line fleet summary.
func tableSummaryLine(r *Report, p palette) string {
	s := r.Summary
	var parts []string
	parts = append(parts, fmt.Sprintf("%s, %d audited, %s",
		plural(s.Hosts, "host", "hosts"), s.Audited, plural(s.Unreachable, "error", "errors")))
	parts = append(parts, "fleet score "+p.bold(fleetScore(s)))
	var fails []string
	for _, sev := range rules.Severities {
		n := s.FailBySeverity[string(sev)]
		item := fmt.Sprintf("%d %s", n, sev)
		if n > 0 {
			item = p.severity(sev, item)
		}
		fails = append(fails, item)
	}
	parts = append(parts, "failing: "+strings.Join(fails, ", "))
	unk := fmt.Sprintf("%d unknown (not proven safe)", s.StatusCounts[string(rules.Unknown)])
	if s.StatusCounts[string(rules.Unknown)] > 0 {
		unk = p.status(rules.Unknown, unk)
	}
	parts = append(parts, unk)
	if n := s.StatusCounts[string(rules.Waived)]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d waived", n))
	}
	return strings.Join(parts, " · ")
}

func newTerminalTable() table.Writer {
	t := table.NewWriter()
	t.SetStyle(table.StyleLight)
	return t
}

// hostsTable has one row per host; a host that could not be audited shows
// its error kind and message across the fact columns.
func hostsTable(r *Report, p palette) string {
	t := newTerminalTable()
	t.AppendHeader(table.Row{"host", "score", "crit", "high", "med", "low", "unknown", "kernel", "kafka", "backlog"})
	for i := range r.Hosts {
		h := &r.Hosts[i]
		if h.Error != nil {
			// Wrapped so a long message does not stretch every column.
			msg := p.paint(wrap("error "+string(h.Error.Kind)+": "+h.Error.Message, errorWidth), text.FgRed)
			t.AppendRow(table.Row{h.Name, p.paint("-", text.FgRed), msg, msg, msg, msg, msg, msg, msg, msg},
				table.RowConfig{AutoMerge: true, AutoMergeAlign: text.AlignLeft})
			continue
		}
		c := countHost(h)
		unknown := p.faint("0")
		if c.Unknown > 0 {
			unknown = p.status(rules.Unknown, strconv.Itoa(c.Unknown))
		}
		t.AppendRow(table.Row{
			h.Name,
			scoreCell(h, c, p),
			countCell(c, rules.Critical, p),
			countCell(c, rules.High, p),
			countCell(c, rules.Medium, p),
			countCell(c, rules.Low, p),
			unknown,
			kernelRelease(h.Facts),
			kafkaVersion(h.Facts),
			effectiveBacklog(h.Facts),
		})
	}
	t.SetColumnConfigs([]table.ColumnConfig{
		{Number: 2, Align: text.AlignRight},
		{Number: 3, Align: text.AlignRight},
		{Number: 4, Align: text.AlignRight},
		{Number: 5, Align: text.AlignRight},
		{Number: 6, Align: text.AlignRight},
		{Number: 7, Align: text.AlignRight},
		{Number: 10, Align: text.AlignRight},
	})
	return t.Render()
}

// scoreCell colours a host's score by its worst failure: green when
// nothing fails and nothing is unknown.
func scoreCell(h *Host, c hostCounts, p palette) string {
	s := strconv.Itoa(h.Score)
	switch {
	case c.Fail[rules.Critical]+c.Fail[rules.High] > 0:
		return p.severity(rules.High, s)
	case c.failures() > 0 || c.Unknown > 0 || c.Error > 0:
		return p.severity(rules.Medium, s)
	}
	return p.status(rules.Pass, s)
}

func countCell(c hostCounts, sev rules.Severity, p palette) string {
	n := c.Fail[sev]
	if n == 0 {
		return p.faint("0")
	}
	return p.severity(sev, strconv.Itoa(n))
}

// groupTable lists grouped findings, one row per group: the detail cell
// holds the title, the sample observed → expected (withSample) and the
// reason, word-wrapped so the table fits a ~120 column terminal.
func groupTable(groups []RuleGroup, p palette, withSample bool) string {
	t := newTerminalTable()
	t.AppendHeader(table.Row{"severity", "rule", "hosts", "details"})
	for _, g := range groups {
		details := []string{p.bold(wrap(g.Title, detailWidth))}
		if s := sampleText(g); withSample && s != "" {
			details = append(details, wrap(clip(s, 2*detailWidth), detailWidth))
		}
		reason := g.Sample.Reason
		if g.Status == rules.Waived {
			reason = waiverNote(g.Sample)
		}
		if reason != "" {
			details = append(details, p.faint(wrap(clip(reason, 3*detailWidth), detailWidth)))
		}
		if src := sourceText(g); src != "" {
			details = append(details, wrap(src, detailWidth))
		}
		t.AppendRow(table.Row{
			p.severity(g.Severity, string(g.Severity)),
			g.Rule,
			hostsCell(g.Hosts, hostsWidth),
			strings.Join(details, "\n"),
		})
		t.AppendSeparator()
	}
	return t.Render()
}

const (
	detailWidth = 60
	hostsWidth  = 24
	errorWidth  = 64
)

// clip shortens s to about max characters at a word boundary, marking the
// cut: the table is for scanning; the full text is in json, markdown and
// html, and in kaudit explain.
func clip(s string, max int) string {
	s = oneLine(s)
	if len([]rune(s)) <= max {
		return s
	}
	r := []rune(s)[:max]
	if i := strings.LastIndexByte(string(r), ' '); i > max/2 {
		return string(r)[:i] + " …"
	}
	return string(r) + "…"
}

// wrap folds whitespace and word-wraps s at width (a longer word is cut).
func wrap(s string, width int) string {
	return text.WrapSoft(oneLine(s), width)
}

// hostsCell is "N: a, b, c +M more" packed into lines of width, breaking
// only between host names.
func hostsCell(hosts []string, width int) string {
	shown := hosts
	if len(shown) > maxListedHosts {
		shown = shown[:maxListedHosts]
	}
	tokens := []string{fmt.Sprintf("%d:", len(hosts))}
	for i, h := range shown {
		if i < len(shown)-1 {
			h += ","
		}
		tokens = append(tokens, h)
	}
	if n := len(hosts) - len(shown); n > 0 {
		tokens = append(tokens, fmt.Sprintf("+%d more", n))
	}
	var lines []string
	line := ""
	for _, tok := range tokens {
		switch {
		case line == "":
			line = tok
		case text.StringWidthWithoutEscSequences(line)+1+text.StringWidthWithoutEscSequences(tok) <= width:
			line += " " + tok
		default:
			lines = append(lines, line)
			line = tok
		}
	}
	return strings.Join(append(lines, line), "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
