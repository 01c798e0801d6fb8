// Package report turns per-host facts and findings into the fleet report
// value (schema version 1) and renders it in named formats. Each format
// lives in its own file and registers itself in init; only cmd/kaudit
// knows about stdout, files and exit codes.
package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

// SchemaVersion is the version of the JSON report's shape.
const SchemaVersion = 1

// Report is one scan of a fleet.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	ToolVersion   string    `json:"tool_version"`
	StartedAt     time.Time `json:"started_at"`
	DurationMS    int64     `json:"duration_ms"`
	Inventory     string    `json:"inventory,omitempty"`
	FailOn        string    `json:"fail_on,omitempty"`
	Interrupted   bool      `json:"interrupted,omitempty"`
	Shard         string    `json:"shard,omitempty"` // K/N of scan --shard; merge wants each K once
	Summary       Summary   `json:"summary"`
	Cluster       *Cluster  `json:"cluster,omitempty"` // scan --bootstrap: the cluster as Kafka sees it
	Hosts         []Host    `json:"hosts"`             // last: the JSON format streams it
}

// Summary aggregates the fleet.
type Summary struct {
	Hosts          int            `json:"hosts"`
	Audited        int            `json:"audited"`
	Unreachable    int            `json:"unreachable"` // hosts with an error of any kind
	FailBySeverity map[string]int `json:"fail_by_severity"`
	StatusCounts   map[string]int `json:"status_counts"`
	Score          int            `json:"score"` // mean of audited hosts' scores; 0 when none audited
	MinScore       int            `json:"min_score"`
}

// Host is one host's result: either Error or Facts+Findings.
type Host struct {
	Name       string          `json:"name"`
	Address    string          `json:"address"`
	Groups     []string        `json:"groups,omitempty"`
	Error      *HostError      `json:"error"`
	Score      int             `json:"score"`
	Deductions []Deduction     `json:"deductions,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	Facts      *facts.Facts    `json:"facts,omitempty"`
	Findings   []rules.Finding `json:"findings"`
	// Spooled holds an audited host's facts, Facts nil, when the scan
	// kept them out of memory (pipeline.Config.SpoolFacts); the JSON
	// format prints them in Facts' place, the others render from what it
	// keeps in memory (viewFacts).
	Spooled *SpooledFacts `json:"-"`
}

// HostError says why a host could not be audited.
type HostError struct {
	Kind    facts.ErrorKind `json:"kind"` // unreachable, auth, hostkey, timeout, protocol
	Message string          `json:"message"`
}

// Deduction is one line of a host's score arithmetic.
type Deduction struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Points   int    `json:"points"`
}

// Weight is the points a failing finding of severity sev costs: critical
// 40, high 20, medium 10, low 4, info (and anything else) 0.
func Weight(sev rules.Severity) int {
	switch sev {
	case rules.Critical:
		return 40
	case rules.High:
		return 20
	case rules.Medium:
		return 10
	case rules.Low:
		return 4
	}
	return 0
}

// ScoreHost fills h.Score and h.Deductions from h.Findings: 100 minus the
// weight of each failing finding, floored at 0. A host with an error scores 0.
func ScoreHost(h *Host) {
	h.Deductions = nil
	if h.Error != nil {
		h.Score = 0
		return
	}
	score := 100
	for _, f := range h.Findings {
		if f.Status != rules.Fail {
			continue
		}
		w := Weight(f.Severity)
		if w == 0 {
			continue
		}
		h.Deductions = append(h.Deductions, Deduction{Rule: f.Rule, Severity: string(f.Severity), Points: w})
		score -= w
	}
	if score < 0 {
		score = 0
	}
	h.Score = score
}

// spooled reports whether some host's facts are in a Spool.
func (r *Report) spooled() bool {
	for i := range r.Hosts {
		if r.Hosts[i].Spooled != nil {
			return true
		}
	}
	return false
}

// Close frees what r holds outside memory: the spool of its spooled
// hosts' facts (pipeline.Config.SpoolFacts), which cannot be read
// afterwards. A report without one has nothing to free.
func (r *Report) Close() error {
	var err error
	seen := map[*Spool]bool{}
	for i := range r.Hosts {
		if sf := r.Hosts[i].Spooled; sf != nil && !seen[sf.spool] {
			seen[sf.spool] = true
			if e := sf.spool.Close(); err == nil {
				err = e
			}
		}
	}
	return err
}

// withViews is r with every spooled host's Facts set to what the formats
// other than JSON read of them (viewFacts), kept in memory when they were
// spooled; r itself is left alone. A spool made for JSON only
// (NewSpoolFor) kept none: an error naming format.
func (r *Report) withViews(format string) (*Report, error) {
	c := *r
	c.Hosts = append([]Host(nil), r.Hosts...)
	for i := range c.Hosts {
		h := &c.Hosts[i]
		if h.Spooled == nil {
			continue
		}
		if !h.Spooled.spool.views {
			return nil, fmt.Errorf("report: host %s: its facts were spooled for a JSON report only; the %s format cannot be rendered from them (kaudit bug: the scan was told the wrong format)", h.Name, format)
		}
		h.Facts, h.Spooled = h.Spooled.view, nil
	}
	return &c, nil
}

// Summarize scores every host and recomputes r.Summary.
func Summarize(r *Report) {
	s := Summary{Hosts: len(r.Hosts), FailBySeverity: map[string]int{}, StatusCounts: map[string]int{}}
	for _, sev := range rules.Severities() {
		s.FailBySeverity[string(sev)] = 0
	}
	total, min := 0, 100
	alike := map[string][]Deduction{}
	for i := range r.Hosts {
		h := &r.Hosts[i]
		ScoreHost(h)
		h.Deductions = shareDeductions(alike, h.Deductions)
		if h.Error != nil {
			s.Unreachable++
			continue
		}
		s.Audited++
		total += h.Score
		if h.Score < min {
			min = h.Score
		}
		for _, f := range h.Findings {
			s.StatusCounts[string(f.Status)]++
			if f.Status == rules.Fail {
				s.FailBySeverity[string(f.Severity)]++
			}
		}
	}
	if s.Audited > 0 {
		s.Score = total / s.Audited
		s.MinScore = min
	}
	r.Summary = s
}

// shareDeductions is d, or an equal list a host scored before had
// (kept in alike): hosts that fail alike share one (read-only, clipped);
// 10,000 simulated hosts' were 7 MB.
func shareDeductions(alike map[string][]Deduction, d []Deduction) []Deduction {
	if len(d) == 0 {
		return d
	}
	var k strings.Builder
	for _, x := range d {
		fmt.Fprintf(&k, "%s\x00%s\x00%d\x00", x.Rule, x.Severity, x.Points)
	}
	if g, ok := alike[k.String()]; ok {
		return g
	}
	d = slices.Clip(d)
	alike[k.String()] = d
	return d
}

// FailOnFor is the --fail-on threshold a saved report is judged by when it
// is rendered again (kaudit report, merge): the one the scan recorded,
// unless flag was given explicitly (set) or nothing valid was recorded;
// then flag.
func (r *Report) FailOnFor(flag string, set bool) string {
	if _, ok := rules.ParseSeverity(r.FailOn); ok && !set {
		return r.FailOn
	}
	return flag
}

// WorstFailure is the highest severity among failing findings, the
// cluster-level ones (scan --bootstrap: a broker nobody audited fails the
// run as a host's finding would) included unless waived; "" if none.
func (r *Report) WorstFailure() rules.Severity {
	worst := r.Worst(rules.Fail)
	if r.Cluster == nil {
		return worst
	}
	for _, p := range r.Cluster.Problems {
		if s, ok := rules.ParseSeverity(p.Severity); ok && p.Waived == "" && s.Rank() > worst.Rank() {
			worst = s
		}
	}
	return worst
}

// Worst is the highest severity among findings with the given status, "" if none.
func (r *Report) Worst(st rules.Status) rules.Severity {
	var worst rules.Severity
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if f.Status == st && f.Severity.Rank() > worst.Rank() {
				worst = f.Severity
			}
		}
	}
	return worst
}

// Finding is rule's finding on the host named host, false when the report
// has no such host or the host no such finding (not audited).
func (r *Report) Finding(host, rule string) (rules.Finding, bool) {
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if h.Name == host && f.Rule == rule {
				return f, true
			}
		}
	}
	return rules.Finding{}, false
}

// RuleGroup is one rule's non-passing results across the fleet.
type RuleGroup struct {
	Rule     string
	Title    string
	Status   rules.Status
	Severity rules.Severity
	Hosts    []string
	Findings []rules.Finding // each host's finding, in the order of Hosts
	Sample   rules.Finding   // the first host's finding, for observed/expected/reason
	// Sources pairs each host with the evidence that decided its finding,
	// for rules that name one (Finding.Source), in Hosts order.
	Sources []HostSource
}

// GroupByRule collects findings with the given statuses by (rule, status,
// severity), sorted by severity (highest first), then status, then rule ID.
func (r *Report) GroupByRule(statuses ...rules.Status) []RuleGroup {
	want := map[rules.Status]bool{}
	for _, s := range statuses {
		want[s] = true
	}
	type key struct {
		rule string
		st   rules.Status
		sev  rules.Severity
	}
	idx := map[key]int{}
	var out []RuleGroup
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if !want[f.Status] {
				continue
			}
			k := key{f.Rule, f.Status, f.Severity}
			i, ok := idx[k]
			if !ok {
				i = len(out)
				idx[k] = i
				out = append(out, RuleGroup{Rule: f.Rule, Title: f.Title, Status: f.Status, Severity: f.Severity, Sample: f})
			}
			out[i].Hosts = append(out[i].Hosts, h.Name)
			out[i].Findings = append(out[i].Findings, f)
			if f.Source != "" {
				out[i].Sources = append(out[i].Sources, HostSource{Host: h.Name, Source: string(f.Source)})
			}
		}
	}
	statusRank := map[rules.Status]int{rules.Fail: 0, rules.Unknown: 1, rules.Warn: 2, rules.Error: 3, rules.Waived: 4, rules.Skip: 5, rules.Pass: 6}
	slices.SortStableFunc(out, func(a, b RuleGroup) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(statusRank[a.Status], statusRank[b.Status]), strings.Compare(a.Rule, b.Rule))
	})
	return out
}
