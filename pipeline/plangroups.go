package pipeline

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/internal/termsafe"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/report"
)

// The fix plan of more than report.GroupedAbove hosts starts with its
// changes counted by group, as the report groups hosts: each change
// (kind, target, value; with the rules asking for it) once, with its hosts per
// cluster (report.HostClusters); each host's plan follows.

// changeGroup is one change planned on several hosts.
type changeGroup struct {
	what    string
	rules   map[string]bool
	hosts   int
	restart bool
	names   []string // its hosts
}

// writeChangeGroups writes plans' changes by group when there are more
// than report.GroupedAbove plans.
func writeChangeGroups(w io.Writer, plans []remediate.HostPlan, clusters map[string][]string, width int) {
	if len(plans) <= report.GroupedAbove {
		return
	}
	idx := map[string]int{}
	var groups []changeGroup
	for _, p := range plans {
		for _, c := range p.Changes {
			what := fmt.Sprintf("%s %s → %s", c.Kind, termsafe.Line(c.Target), termsafe.Line(c.To))
			k, ok := idx[what]
			if !ok {
				k = len(groups)
				idx[what] = k
				groups = append(groups, changeGroup{what: what, rules: map[string]bool{}})
			}
			for _, id := range c.Rules {
				groups[k].rules[termsafe.Line(id)] = true
			}
			groups[k].hosts++
			groups[k].restart = groups[k].restart || c.RestartRequired
			groups[k].names = append(groups[k].names, p.Host)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].hosts > groups[j].hosts })
	fmt.Fprintf(w, "Changes by group (%s; each host's plan follows):\n", words.Count(len(plans), "audited host", "audited hosts"))
	for _, g := range groups {
		line := fmt.Sprintf("%s: %s (%s)", words.Count(g.hosts, "host", "hosts"), g.what, strings.Join(slices.Sorted(maps.Keys(g.rules)), ", "))
		if g.restart {
			line += " [restart required]"
		}
		line += "; " + termsafe.Line(report.ClusterCounts(g.names, clusters))
		for _, l := range termui.Wrap(line, width-2, 4) {
			fmt.Fprintln(w, "  "+l)
		}
	}
	fmt.Fprintln(w)
}
