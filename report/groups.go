package report

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

// The grouped view of a large fleet: what a person reads instead of a row
// per host. Hosts are grouped by Kafka cluster (HostClusters, the restart
// verdict's grouping) and, within a cluster, by failure pattern (the same
// failing and unknown rules, or the same kind of error); the fixes are
// ranked as actions by severity × hosts. It is a presentation: the report
// value and its JSON do not change.

// GroupedAbove is the fleet size above which the human formats (table,
// markdown, html) show the grouped view instead of one row per host.
const GroupedAbove = 30

// Grouped reports whether r is shown grouped.
func (r *Report) Grouped() bool { return len(r.Hosts) > GroupedAbove }

// FleetGroups is a report grouped for reading at fleet scale. Host
// indices are into the report's Hosts.
type FleetGroups struct {
	Clusters []ClusterGroup
	Actions  []Action
	// Rules are the failing and unknown rules (GroupByRule order) with
	// their hosts counted per cluster, in Clusters order.
	Rules []RuleCount
	// Errors are the hosts not audited, by kind, most first.
	Errors []ErrorCount
}

// ClusterGroup is one cluster (or inventory group) and its patterns.
type ClusterGroup struct {
	Name     string
	Hosts    []int
	Patterns []Pattern // worst first
}

// Pattern is the hosts of one cluster that fail the same rules and leave
// the same rules unknown, or that could not be audited for the same kind
// of reason.
type Pattern struct {
	Fail      []string        // failing rules, catalog order
	Unknown   []string        // unknown rules, catalog order
	ErrorKind facts.ErrorKind // not audited: why; "" for audited hosts
	Worst     rules.Severity  // the worst failing severity, "" when none
	Hosts     []int           // inventory order; Hosts[0] is the representative
	Kernels   []string        // distinct kernel releases, sorted (none when not audited)
	Kafkas    []string        // distinct Kafka versions, sorted
}

// Clean reports whether the pattern's hosts were audited and nothing
// fails or is unknown on them.
func (p Pattern) Clean() bool {
	return p.ErrorKind == "" && len(p.Fail) == 0 && len(p.Unknown) == 0
}

// Action is one change that fixes failing findings: a sysctl or Kafka
// property to set, a limit to raise, or a rule's own fix.
type Action struct {
	Text     string // "raise net.core.somaxconn to 4096"
	Severity rules.Severity
	Rules    []string // the failing rules it fixes, sorted
	Hosts    []int
	Clusters []string // the clusters of its hosts, sorted
}

// Rank is what actions are ranked by: severity weight × hosts.
func (a Action) Rank() int { return (Weight(a.Severity) + 1) * len(a.Hosts) }

// Summary is "raise net.core.somaxconn to 4096 on 412 hosts of 3
// clusters: critical, asked by 2 rules": the rules whose fix asks for the
// change (it may not be all a rule needs: each manual step is an action
// of its own).
func (a Action) Summary() string {
	where := words.Count(len(a.Hosts), "host", "hosts")
	if len(a.Clusters) > 1 {
		where += " of " + words.Count(len(a.Clusters), "cluster", "clusters")
	} else if len(a.Clusters) == 1 {
		where += " of " + a.Clusters[0]
	}
	return fmt.Sprintf("%s on %s: %s, asked by %s", a.Text, where, a.Severity, words.Count(len(a.Rules), "rule", "rules"))
}

// RuleCount is a rule's non-passing hosts, in all and per cluster.
type RuleCount struct {
	RuleGroup
	PerCluster []int
}

// ErrorCount is the hosts not audited for one kind of reason.
type ErrorCount struct {
	Kind  facts.ErrorKind
	Hosts []int
}

// Groups builds r's grouped view.
func (r *Report) Groups() FleetGroups {
	var g FleetGroups
	member := g.clusters(r)
	g.Rules = ruleCounts(r, member, len(g.Clusters))
	g.Actions = actions(r, member, g.Clusters)
	g.Errors = errorCounts(r)
	return g
}

// clusters fills g.Clusters, sorted by name, and returns each host's
// cluster indices.
func (g *FleetGroups) clusters(r *Report) [][]int {
	proven := ProvenClusters(r.Cluster)
	names := make([][]string, len(r.Hosts))
	idx := map[string]int{}
	var all []string
	for i := range r.Hosts {
		names[i] = HostClusters(&r.Hosts[i], proven)
		for _, n := range names[i] {
			if _, ok := idx[n]; !ok {
				idx[n] = 0
				all = append(all, n)
			}
		}
	}
	sort.Strings(all)
	for c, n := range all {
		idx[n] = c
		g.Clusters = append(g.Clusters, ClusterGroup{Name: n})
	}
	member := make([][]int, len(r.Hosts))
	for i, ns := range names {
		for _, n := range ns {
			c := idx[n]
			g.Clusters[c].Hosts = append(g.Clusters[c].Hosts, i)
			member[i] = append(member[i], c)
		}
	}
	for c := range g.Clusters {
		g.Clusters[c].Patterns = patterns(r, g.Clusters[c].Hosts)
	}
	return member
}

// patterns groups hosts (indices into r.Hosts) by failure pattern.
func patterns(r *Report, hosts []int) []Pattern {
	idx := map[string]int{}
	var out []Pattern
	for _, i := range hosts {
		p := patternOf(&r.Hosts[i])
		key := string(p.ErrorKind) + "|" + strings.Join(p.Fail, ",") + "|" + strings.Join(p.Unknown, ",")
		k, ok := idx[key]
		if !ok {
			k = len(out)
			idx[key] = k
			out = append(out, p)
		}
		out[k].Hosts = append(out[k].Hosts, i)
		if p.ErrorKind == "" {
			out[k].Kernels = addDistinct(out[k].Kernels, kernelRelease(r.Hosts[i].Facts))
			out[k].Kafkas = addDistinct(out[k].Kafkas, kafkaVersion(r.Hosts[i].Facts))
		}
	}
	for k := range out {
		sort.Strings(out[k].Kernels)
		sort.Strings(out[k].Kafkas)
	}
	slices.SortStableFunc(out, func(a, b Pattern) int {
		return cmp.Or(cmp.Compare(a.class(), b.class()), cmp.Compare(b.Worst.Rank(), a.Worst.Rank()), cmp.Compare(len(b.Hosts), len(a.Hosts)))
	})
	return out
}

// class orders patterns: failing, then only unknown, then not audited,
// then clean.
func (p Pattern) class() int {
	switch {
	case len(p.Fail) > 0:
		return 0
	case len(p.Unknown) > 0:
		return 1
	case p.ErrorKind != "":
		return 2
	}
	return 3
}

// patternOf is h's pattern without its hosts.
func patternOf(h *Host) Pattern {
	if h.Error != nil {
		return Pattern{ErrorKind: h.Error.Kind}
	}
	var p Pattern
	for _, f := range h.Findings {
		switch f.Status {
		case rules.Fail:
			p.Fail = addDistinct(p.Fail, f.Rule)
			if f.Severity.Rank() > p.Worst.Rank() {
				p.Worst = f.Severity
			}
		case rules.Unknown:
			p.Unknown = addDistinct(p.Unknown, f.Rule)
		}
	}
	return p
}

// addDistinct appends s unless list has it (lists here are short).
func addDistinct(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// ruleCounts counts each failing or unknown rule's hosts per cluster.
func ruleCounts(r *Report, member [][]int, clusters int) []RuleCount {
	index := hostIndex(r)
	var out []RuleCount
	for _, grp := range r.GroupByRule(rules.Fail, rules.Unknown) {
		rc := RuleCount{RuleGroup: grp, PerCluster: make([]int, clusters)}
		for _, name := range grp.Hosts {
			for _, c := range member[index[name]] {
				rc.PerCluster[c]++
			}
		}
		out = append(out, rc)
	}
	return out
}

// hostIndex maps host names to their index (the first, if two share one).
func hostIndex(r *Report) map[string]int {
	m := make(map[string]int, len(r.Hosts))
	for i := len(r.Hosts) - 1; i >= 0; i-- {
		m[r.Hosts[i].Name] = i
	}
	return m
}

// errorCounts groups the hosts not audited by kind, most first.
func errorCounts(r *Report) []ErrorCount {
	idx := map[facts.ErrorKind]int{}
	var out []ErrorCount
	for i := range r.Hosts {
		e := r.Hosts[i].Error
		if e == nil {
			continue
		}
		k, ok := idx[e.Kind]
		if !ok {
			k = len(out)
			idx[e.Kind] = k
			out = append(out, ErrorCount{Kind: e.Kind})
		}
		out[k].Hosts = append(out[k].Hosts, i)
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a].Hosts) > len(out[b].Hosts) })
	return out
}
