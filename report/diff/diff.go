// Package diff compares two kaudit reports (an earlier and a later scan of
// the same fleet): which findings newly fail, newly pass or still fail per
// host × rule, which hosts appeared or disappeared, and which facts
// changed (kernel release, Kafka version, every gathered sysctl, whether
// the host could be audited).
package diff

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/formats"
	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Side summarizes one of the two reports.
type Side struct {
	StartedAt time.Time `json:"started_at"`
	Inventory string    `json:"inventory,omitempty"`
	Hosts     int       `json:"hosts"`
	Audited   int       `json:"audited"`
	Score     int       `json:"score"`
	Fail      int       `json:"fail"`
}

// Change is one host × rule whose status is reported.
type Change struct {
	Host        string         `json:"host"`
	Rule        string         `json:"rule"`
	Severity    rules.Severity `json:"severity"`               // in the new report (old one when the finding is gone)
	OldStatus   rules.Status   `json:"old_status,omitempty"`   // "" when the old report has no such finding (new host, host not audited, new rule)
	NewStatus   rules.Status   `json:"new_status,omitempty"`   // "" when the new report has no such finding
	OldObserved string         `json:"old_observed,omitempty"` // what was observed before
	NewObserved string         `json:"new_observed,omitempty"`
	Reason      string         `json:"reason,omitempty"` // the new finding's reason (old one if gone)
}

// FactChange is one fact that differs between the reports.
type FactChange struct {
	Host string `json:"host"`
	Fact string `json:"fact"` // "kernel.release", "kafka.version", "sysctl.net.core.somaxconn", "audit"
	Old  string `json:"old"`  // "" when absent
	New  string `json:"new"`
}

// ScoreChange is a host whose score changed.
type ScoreChange struct {
	Host string `json:"host"`
	Old  int    `json:"old"`
	New  int    `json:"new"`
}

// Diff is the comparison of two reports.
type Diff struct {
	Old          Side          `json:"old"`
	New          Side          `json:"new"`
	NewlyFailing []Change      `json:"newly_failing"` // fail now, not fail before (including hosts and rules not seen before)
	NewlyPassing []Change      `json:"newly_passing"` // fail before, pass/warn/skip now
	StillFailing []Change      `json:"still_failing"` // fail in both (severity may have changed)
	Other        []Change      `json:"other_changes"` // every other status change (e.g. pass → unknown, fail → unknown, fail → gone)
	HostsAdded   []string      `json:"hosts_added"`
	HostsRemoved []string      `json:"hosts_removed"`
	Facts        []FactChange  `json:"facts_changed"`
	Scores       []ScoreChange `json:"scores_changed"`
	// clusters are each host's clusters (report.HostClusters), for the
	// grouped text of a large fleet.
	clusters map[string][]string
}

// Compare diffs old against new. Hosts are matched by name, findings by
// rule ID. Findings are compared only where the host is present in both
// reports or is new; a removed host is listed in HostsRemoved only.
func Compare(old, new *report.Report) *Diff {
	d := &Diff{
		Old: side(old), New: side(new),
		NewlyFailing: []Change{}, NewlyPassing: []Change{}, StillFailing: []Change{}, Other: []Change{},
		HostsAdded: []string{}, HostsRemoved: []string{}, Facts: []FactChange{}, Scores: []ScoreChange{},
		clusters: report.ClustersByHost(old),
	}
	for h, cs := range report.ClustersByHost(new) {
		d.clusters[h] = cs // a host's cluster now wins
	}
	oldHosts := map[string]*report.Host{}
	for i := range old.Hosts {
		oldHosts[old.Hosts[i].Name] = &old.Hosts[i]
	}
	newHosts := map[string]bool{}
	for i := range new.Hosts {
		nh := &new.Hosts[i]
		newHosts[nh.Name] = true
		oh := oldHosts[nh.Name]
		if oh == nil {
			d.HostsAdded = append(d.HostsAdded, nh.Name)
			oh = &report.Host{Name: nh.Name}
		} else {
			d.Facts = append(d.Facts, factChanges(oh, nh)...)
			if oh.Score != nh.Score {
				d.Scores = append(d.Scores, ScoreChange{Host: nh.Name, Old: oh.Score, New: nh.Score})
			}
		}
		d.compareFindings(oh, nh)
	}
	for _, oh := range old.Hosts {
		if !newHosts[oh.Name] {
			d.HostsRemoved = append(d.HostsRemoved, oh.Name)
		}
	}
	for _, cs := range []*[]Change{&d.NewlyFailing, &d.NewlyPassing, &d.StillFailing, &d.Other} {
		sortChanges(*cs)
	}
	sort.Strings(d.HostsAdded)
	sort.Strings(d.HostsRemoved)
	return d
}

func side(r *report.Report) Side {
	s := Side{StartedAt: r.StartedAt, Inventory: r.Inventory, Hosts: r.Summary.Hosts, Audited: r.Summary.Audited, Score: r.Summary.Score}
	for _, n := range r.Summary.FailBySeverity {
		s.Fail += n
	}
	return s
}

func (d *Diff) compareFindings(oh, nh *report.Host) {
	olds := map[string]rules.Finding{}
	for _, f := range oh.Findings {
		olds[f.Rule] = f
	}
	seen := map[string]bool{}
	for _, nf := range nh.Findings {
		seen[nf.Rule] = true
		of, had := olds[nf.Rule]
		c := Change{Host: nh.Name, Rule: nf.Rule, Severity: nf.Severity, NewStatus: nf.Status, NewObserved: nf.Observed, Reason: nf.Reason}
		if had {
			c.OldStatus, c.OldObserved = of.Status, of.Observed
		}
		switch {
		case nf.Status == rules.Fail && c.OldStatus == rules.Fail:
			d.StillFailing = append(d.StillFailing, c)
		case nf.Status == rules.Fail:
			d.NewlyFailing = append(d.NewlyFailing, c)
		case c.OldStatus == rules.Fail && passing(nf.Status):
			d.NewlyPassing = append(d.NewlyPassing, c)
		case had && c.OldStatus != nf.Status:
			d.Other = append(d.Other, c)
		}
	}
	// Findings the new report no longer has (host not audited now, rule
	// retired): only a change worth listing when they failed or were unknown.
	for _, of := range oh.Findings {
		if seen[of.Rule] || of.Status == rules.Pass || of.Status == rules.Skip {
			continue
		}
		d.Other = append(d.Other, Change{Host: nh.Name, Rule: of.Rule, Severity: of.Severity, OldStatus: of.Status, OldObserved: of.Observed, Reason: of.Reason})
	}
}

func passing(s rules.Status) bool { return s == rules.Pass || s == rules.Warn || s == rules.Skip }

func sortChanges(cs []Change) {
	slices.SortStableFunc(cs, func(a, b Change) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), strings.Compare(a.Rule, b.Rule), strings.Compare(a.Host, b.Host))
	})
}

func factChanges(oh, nh *report.Host) []FactChange {
	var out []FactChange
	add := func(fact, o, n string) {
		if o != n {
			out = append(out, FactChange{Host: nh.Name, Fact: fact, Old: o, New: n})
		}
	}
	add("audit", auditState(oh), auditState(nh))
	of, nf := oh.Facts, nh.Facts
	if of == nil || nf == nil {
		return out // one side was not audited: nothing to compare
	}
	add("kernel.release", of.Kernel.Release, nf.Kernel.Release)
	add("kernel.distro", distro(of.Kernel.Distro, of.Kernel.DistroVer), distro(nf.Kernel.Distro, nf.Kernel.DistroVer))
	add("kafka.version", kafkaVersion(of.Kafka), kafkaVersion(nf.Kafka))
	keys := map[string]bool{}
	for k := range of.Sysctl {
		keys[k] = true
	}
	for k := range nf.Sysctl {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		add("sysctl."+k, of.Sysctl[k], nf.Sysctl[k])
	}
	return out
}

func auditState(h *report.Host) string {
	if h.Error != nil {
		return "not audited (" + string(h.Error.Kind) + ")"
	}
	return "audited"
}

func distro(id, ver string) string {
	return strings.TrimSpace(id + " " + ver)
}

func kafkaVersion(k *facts.Kafka) string {
	if k == nil || k.Version == "" {
		return ""
	}
	if k.Distribution != "" && k.Distribution != "apache" {
		return k.Version + " (" + k.Distribution + ")"
	}
	return k.Version
}

// NewlyFailingCount is len(NewlyFailing); convenient for exit codes.
func (d *Diff) NewlyFailingCount() int { return len(d.NewlyFailing) }

// Empty reports whether nothing changed at all.
func (d *Diff) Empty() bool {
	return len(d.NewlyFailing)+len(d.NewlyPassing)+len(d.Other)+len(d.HostsAdded)+len(d.HostsRemoved)+len(d.Facts) == 0
}

var writers = formats.New[func(io.Writer, *Diff) error]("diff format")

func init() {
	writers.Register("json", formats.JSON[*Diff])
	writers.Register("table", func(w io.Writer, d *Diff) error { return writeText(w, d, false) })
	writers.Register("markdown", func(w io.Writer, d *Diff) error { return writeText(w, d, true) })
}

// Formats lists the formats the diff can be written in, sorted.
func Formats() []string { return writers.Names() }

// Write renders d in format (one of Formats).
func Write(w io.Writer, format string, d *Diff) error {
	fn, err := writers.Lookup(format)
	if err != nil {
		return err
	}
	return fn(w, d)
}

func status(s rules.Status) string {
	if s == "" {
		return "—"
	}
	return string(s)
}

// textWriter writes the diff's headings and tables as plain text or
// Markdown.
type textWriter struct {
	ew *errWriter
	md bool
}

func (t textWriter) heading(title string, n int) {
	if t.md {
		fmt.Fprintf(t.ew, "\n## %s (%d)\n\n", title, n)
	} else {
		fmt.Fprintf(t.ew, "\n%s (%d)\n", strings.ToUpper(title), n)
	}
}

func (t textWriter) table(header []string, rows [][]string) {
	for _, r := range rows { // host names, rules, observed values, facts: a host's text
		for i := range r {
			r[i] = termsafe.Line(r[i])
		}
	}
	if t.md {
		fmt.Fprintf(t.ew, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
		for _, r := range rows {
			for i := range r {
				r[i] = strings.ReplaceAll(r[i], "|", `\|`)
			}
			fmt.Fprintf(t.ew, "| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	tw := tabwriter.NewWriter(t.ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\n", strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
	}
	tw.Flush()
}

// section is a heading and, when rows is not empty, its table.
func (t textWriter) section(title string, header []string, rows [][]string) {
	t.heading(title, len(rows))
	if len(rows) > 0 {
		t.table(header, rows)
	}
}

// hosts is a heading and the hosts on one line.
func (t textWriter) hosts(title string, names []string) {
	t.heading(title, len(names))
	if len(names) > 0 {
		fmt.Fprintf(t.ew, "  %s\n", termsafe.Line(strings.Join(names, ", ")))
	}
}

func writeText(out io.Writer, d *Diff, md bool) error {
	t := textWriter{ew: &errWriter{w: out}, md: md}
	if md {
		fmt.Fprintf(t.ew, "# kaudit diff\n\n")
	} else {
		fmt.Fprintf(t.ew, "kaudit diff\n\n")
	}
	t.table([]string{"SCAN", "STARTED", "HOSTS", "AUDITED", "FAILING", "SCORE"}, [][]string{sideRow("old", d.Old), sideRow("new", d.New)})
	if d.grouped() {
		writeGrouped(t, d)
		return t.ew.err
	}
	hdr := []string{"HOST", "RULE", "SEVERITY", "STATUS", "OBSERVED"}
	t.section("Newly failing", hdr, changeRows(d.NewlyFailing))
	t.section("Newly passing", hdr, changeRows(d.NewlyPassing))
	t.section("Still failing", hdr, changeRows(d.StillFailing))
	t.section("Other status changes", hdr, changeRows(d.Other))
	t.hosts("Hosts added", d.HostsAdded)
	t.hosts("Hosts removed", d.HostsRemoved)
	var facts, scores [][]string
	for _, f := range d.Facts {
		facts = append(facts, []string{f.Host, f.Fact, cmp.Or(f.Old, "—"), cmp.Or(f.New, "—")})
	}
	t.section("Fact changes", []string{"HOST", "FACT", "OLD", "NEW"}, facts)
	for _, s := range d.Scores {
		scores = append(scores, []string{s.Host, fmt.Sprint(s.Old), fmt.Sprint(s.New), fmt.Sprintf("%+d", s.New-s.Old)})
	}
	t.section("Scores changed", []string{"HOST", "OLD", "NEW", "DELTA"}, scores)
	return t.ew.err
}

func sideRow(name string, s Side) []string {
	return []string{name, stamp(s.StartedAt), fmt.Sprint(s.Hosts), fmt.Sprint(s.Audited), fmt.Sprint(s.Fail), fmt.Sprint(s.Score)}
}

func changeRows(cs []Change) [][]string {
	var rows [][]string
	for _, c := range cs {
		obs := c.NewObserved
		if c.OldObserved != c.NewObserved && c.OldStatus != "" {
			obs = cmp.Or(c.OldObserved, "—") + " → " + cmp.Or(c.NewObserved, "—")
		}
		rows = append(rows, []string{c.Host, c.Rule, string(c.Severity), status(c.OldStatus) + " → " + status(c.NewStatus), oneLine(obs, 60)})
	}
	return rows
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
