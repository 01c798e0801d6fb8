package report

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/words"
)

// The Markdown document of a fleet of more than GroupedAbove hosts: the
// actions ranked, the rule × cluster counts and the hosts by cluster and
// failure pattern take the place of the row per host; the rule sections
// that follow are the same as a small fleet's.

// mdPatternRows caps the pattern table unless Options.Hosts is set.
const mdPatternRows = 60

// mdGrouped writes the grouped sections.
func mdGrouped(b *strings.Builder, r *Report, opt Options) {
	g := r.Groups()
	mdActions(b, g)
	mdRuleClusters(b, g)
	mdPatterns(b, r, g, opt.Hosts)
}

// mdActions writes every action, ranked.
func mdActions(b *strings.Builder, g FleetGroups) {
	b.WriteString("## What to fix first\n\n")
	if len(g.Actions) == 0 {
		b.WriteString("Nothing: no rule fails on any audited host.\n\n")
		return
	}
	b.WriteString("Each change the failing findings ask for, ranked by severity × hosts affected.\n\n")
	b.WriteString("| # | Severity | Action | Hosts | Clusters | Asked by |\n|--:|---|---|--:|---|---|\n")
	for k, a := range g.Actions {
		codes := make([]string, len(a.Rules))
		for i, id := range a.Rules {
			codes[i] = mdCode(id)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %d | %s | %s |\n", k+1, a.Severity, mdText(a.Text), len(a.Hosts),
			mdText(hostList(a.Clusters, maxListedHosts)), strings.Join(codes, ", "))
	}
	b.WriteString("\n")
}

// mdRuleClusters writes each failing or unknown rule's hosts per cluster.
func mdRuleClusters(b *strings.Builder, g FleetGroups) {
	if len(g.Rules) == 0 {
		return
	}
	shown := min(len(g.Clusters), maxHeatClusters)
	b.WriteString("## Failing and unknown rules × clusters\n\n| Severity | Status | Rule | Hosts |")
	for _, c := range g.Clusters[:shown] {
		b.WriteString(" " + mdText(c.Name) + " |")
	}
	if shown < len(g.Clusters) {
		fmt.Fprintf(b, " %d more clusters |", len(g.Clusters)-shown)
	}
	b.WriteString("\n|---|---|---|--:|" + strings.Repeat("--:|", len(g.Clusters[:shown])+boolInt(shown < len(g.Clusters))) + "\n")
	for _, rc := range g.Rules {
		fmt.Fprintf(b, "| %s | %s | %s | %d |", rc.Severity, ruleStatusWord(rc), mdCode(rc.Rule), len(rc.Hosts))
		rest := 0
		for c, n := range rc.PerCluster {
			if c < shown {
				fmt.Fprintf(b, " %d |", n)
			} else {
				rest += n
			}
		}
		if shown < len(g.Clusters) {
			fmt.Fprintf(b, " %d |", rest)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// mdPatterns writes the hosts by cluster and failure pattern, a row each.
func mdPatterns(b *strings.Builder, r *Report, g FleetGroups, all bool) {
	b.WriteString("## Hosts by cluster and failure pattern\n\n")
	if len(g.Errors) > 0 {
		b.WriteString(mdText(errorSummary(g.Errors)) + ".\n\n")
	}
	b.WriteString("| Cluster | Hosts | Pattern | Shared | Rules | Host list |\n|---|--:|---|---|---|---|\n")
	rows := 0
	for _, c := range g.Clusters {
		for k, p := range c.Patterns {
			if !all && rows == mdPatternRows {
				fmt.Fprintf(b, "| %s | %d | +%s | | | --hosts lists them |\n", mdText(c.Name), hostsIn(c.Patterns[k:]),
					words.Count(len(c.Patterns)-k, "more pattern", "more patterns"))
				break
			}
			rows++
			list := hostNames(r, p.Hosts)
			names := hostList(list, maxListedHosts)
			if all {
				names = strings.Join(list, ", ")
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", mdText(c.Name), len(p.Hosts), mdText(patternWhat(p)),
				mdText(patternShared(p)), mdText(patternRules(p)), mdText(names))
		}
	}
	b.WriteString("\n")
}

// mdClusterBrief writes the cluster of a grouped report: its brokers
// counted, its findings grouped by rule (--hosts lists every broker).
func mdClusterBrief(b *strings.Builder, r *Report) {
	c := r.Cluster
	if c == nil {
		return
	}
	mdClusterHead(b, c)
	b.WriteString(mdText(clusterBrokerCounts(c)+" (--hosts lists each broker)") + "\n\n")
	for _, l := range clusterProblemLines(c) {
		b.WriteString("- " + mdText(l) + "\n")
	}
	if len(c.Problems) > 0 {
		b.WriteString("\n")
	}
}
