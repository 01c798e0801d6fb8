package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

// The terminal report of a fleet of more than GroupedAbove hosts: the
// actions ranked, the rule × cluster counts, then the hosts by cluster and
// failure pattern. Fitted to the width; at 1,000 hosts it stays on one
// screen or two (the host lists come with Options.Hosts).

// patternLines is how many lines the patterns may take in all, unless
// Options.Hosts lists every host.
const patternLines = 20

// maxClusterColumns caps the rule × cluster table's cluster columns; the
// rest are summed in one "other" column.
const maxClusterColumns = 8

// grouped writes the grouped sections.
func (t *termReport) grouped(r *Report, opt Options) {
	g := r.Groups()
	t.actions(g)
	t.ruleClusters(g)
	t.patterns(r, g, opt.Hosts)
}

// actions writes the ranked actions.
func (t *termReport) actions(g FleetGroups) {
	if len(g.Actions) == 0 {
		t.title("What to fix first")
		t.b.WriteString(t.p.status(rules.Pass, "nothing: no rule fails on any audited host") + "\n")
		return
	}
	t.title(fmt.Sprintf("What to fix first (%d actions, by severity × hosts)", len(g.Actions)))
	gr := &grid{cols: []column{
		{head: "SEVERITY"},
		{head: "HOSTS", right: true},
		{head: "WHERE", min: 8},
		{head: "ACTION", min: 20, wrap: true},
		{head: "ASKED BY", min: 7},
	}}
	for k, a := range g.Actions {
		if k == maxActions {
			break
		}
		sev := a.Severity
		where := words.Count(len(a.Clusters), "cluster", "clusters")
		if len(a.Clusters) == 1 {
			where = a.Clusters[0]
		}
		gr.add(cell{text: string(sev), paint: func(s string) string { return t.p.severity(sev, s) }},
			plain(strconv.Itoa(len(a.Hosts))), plain(safe(where)), plain(safe(a.Text)), plain(safe(fixesText(a))))
	}
	t.b.WriteString(gr.render(t.width, t.p))
	if more := moreActions(g.Actions, maxActions); more != "" {
		t.prose(more, 4, t.p.faint)
	}
}

// fixesText is the rule that asks for an action, or how many do.
func fixesText(a Action) string {
	if len(a.Rules) == 1 {
		return a.Rules[0]
	}
	return words.Count(len(a.Rules), "rule", "rules")
}

// ruleClusters writes each failing or unknown rule's hosts per cluster.
func (t *termReport) ruleClusters(g FleetGroups) {
	if len(g.Rules) == 0 {
		return
	}
	t.title(fmt.Sprintf("Failing and unknown rules × clusters (%d)", len(g.Rules)))
	shown := clusterColumns(g, t.width)
	cols := []column{{head: "SEVERITY"}, {head: "STATUS", short: "ST"}, {head: "RULE"}, {head: "HOSTS", right: true}}
	for _, c := range g.Clusters[:shown] {
		cols = append(cols, column{head: termui.Truncate(safe(c.Name), 12), right: true})
	}
	if shown < len(g.Clusters) {
		cols = append(cols, column{head: fmt.Sprintf("+%d", len(g.Clusters)-shown), right: true})
	}
	gr := &grid{cols: cols}
	for _, rc := range g.Rules {
		sev, st := rc.Severity, rc.Status
		row := []cell{{text: string(sev), paint: func(s string) string { return t.p.severity(sev, s) }},
			{text: ruleStatusWord(rc), paint: func(s string) string { return t.p.status(st, s) }},
			plain(safe(rc.Rule)), plain(strconv.Itoa(len(rc.Hosts)))}
		rest := 0
		for c, n := range rc.PerCluster {
			if c >= shown {
				rest += n
				continue
			}
			row = append(row, countOrDot(n, t.p))
		}
		if shown < len(g.Clusters) {
			row = append(row, countOrDot(rest, t.p))
		}
		gr.add(row...)
	}
	t.b.WriteString(gr.render(t.width, t.p))
}

// clusterColumns is how many clusters get a column at width: each takes
// up to 13 columns after the 48 the rule's own columns take.
func clusterColumns(g FleetGroups, width int) int {
	n := min(len(g.Clusters), maxClusterColumns)
	if width <= 0 {
		return n
	}
	fit := max(1, (width-48)/13)
	if fit < len(g.Clusters) && fit < n {
		return fit - 1 + boolInt(fit == 1) // room for the "+N" column
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func countOrDot(n int, p palette) cell {
	if n == 0 {
		return cell{text: "·", paint: p.faint}
	}
	return plain(strconv.Itoa(n))
}

// patterns writes each cluster's failure patterns, one grid: a line each
// (hosts, what fails, what they share, a representative host, the rules),
// within patternLines unless all is set, which also lists every host.
func (t *termReport) patterns(r *Report, g FleetGroups, all bool) {
	t.title("Hosts by cluster and failure pattern")
	if len(g.Errors) > 0 {
		t.prose(errorSummary(g.Errors), 4, t.p.red)
	}
	per := max(1, patternLines/max(1, len(g.Clusters))-1)
	gr := &grid{cols: []column{{head: "CLUSTER", min: 11}, {head: "HOSTS", right: true}, {head: "PATTERN", min: 8},
		{head: "KERNEL", min: 8}, {head: "KAFKA", min: 5}, {head: "E.G.", min: 8}, {head: "RULES", min: 10}}}
	var lists [][]string // with all: each row's hosts
	for ci, c := range g.Clusters {
		if !all && len(gr.rows) >= patternLines {
			gr.add(plain("+"+strconv.Itoa(len(g.Clusters)-ci)), plain(""), cell{text: "more clusters (--hosts, -f html)", paint: t.p.faint},
				plain(""), plain(""), plain(""), plain(""))
			break
		}
		name := plain(safe(c.Name))
		for k, p := range c.Patterns {
			if !all && k == per && len(c.Patterns) > per {
				gr.add(name, plain(strconv.Itoa(hostsIn(c.Patterns[k:]))),
					cell{text: "+" + words.Count(len(c.Patterns)-k, "more pattern", "more patterns"), paint: t.p.faint},
					plain(""), plain(""), plain(""), plain("(--hosts, -f html)"))
				break
			}
			gr.add(name, plain(strconv.Itoa(len(p.Hosts))), t.patternCell(p), plain(safe(sharedOne(p.Kernels, "kernels", p))),
				plain(safe(sharedOne(p.Kafkas, "versions", p))), plain(safe(r.Hosts[p.Hosts[0]].Name)), plain(safe(patternRules(p))))
			lists = append(lists, hostNames(r, p.Hosts))
			name = plain("")
		}
	}
	if !all {
		t.b.WriteString(gr.render(t.width, t.p))
		return
	}
	// Every host: each pattern's line, then its hosts wrapped under it.
	ws, gap, short := gr.widths(t.width)
	head := make([]cell, len(gr.cols))
	for i := range gr.cols {
		head[i] = cell{text: gr.head(i, short), paint: t.p.bold}
	}
	gr.renderRow(&t.b, head, ws, gap)
	for k, row := range gr.rows {
		gr.renderRow(&t.b, row, ws, gap)
		for _, l := range termui.Wrap("hosts: "+safe(strings.Join(lists[k], ", ")), max(t.width-6, 0), 7) {
			t.b.WriteString("      " + l + "\n")
		}
	}
}

// sharedOne is the one value a pattern's hosts share, or how many
// differ; "-" for hosts not audited.
func sharedOne(values []string, many string, p Pattern) string {
	if p.ErrorKind != "" {
		return "-"
	}
	if len(values) == 1 {
		return values[0]
	}
	return strconv.Itoa(len(values)) + " " + many
}

// hostsIn counts the hosts of patterns.
func hostsIn(ps []Pattern) int {
	n := 0
	for _, p := range ps {
		n += len(p.Hosts)
	}
	return n
}

func (t *termReport) patternCell(p Pattern) cell {
	s := patternWhat(p)
	switch {
	case p.ErrorKind != "":
		return cell{text: s, paint: t.p.red}
	case p.Worst != "":
		sev := p.Worst
		return cell{text: s, paint: func(x string) string { return t.p.severity(sev, x) }}
	case len(p.Unknown) > 0:
		return cell{text: s, paint: func(x string) string { return t.p.status(rules.Unknown, x) }}
	}
	return cell{text: s, paint: func(x string) string { return t.p.status(rules.Pass, x) }}
}
