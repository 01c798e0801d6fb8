package diff

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/report"
)

// A diff of a fleet of more than report.GroupedAbove hosts is written by
// group, as the report is: each rule's change ("87 hosts newly fail
// somaxconn") with its hosts counted per cluster (report.HostClusters) and
// a few named; each fact change once with its hosts; the scores by delta.

// grouped reports whether d is written by group.
func (d *Diff) grouped() bool {
	return d.Old.Hosts > report.GroupedAbove || d.New.Hosts > report.GroupedAbove
}

// hostGroup is hosts sharing one change, in first-seen order.
type hostGroup struct {
	key   []string // the columns the change is shown by
	hosts []string
}

// groupBy collects rows by their key, in first-seen order.
func groupBy(n int, key func(i int) []string, host func(i int) string) []hostGroup {
	idx := map[string]int{}
	var out []hostGroup
	for i := 0; i < n; i++ {
		k := key(i)
		j, ok := idx[strings.Join(k, "\x00")]
		if !ok {
			j = len(out)
			idx[strings.Join(k, "\x00")] = j
			out = append(out, hostGroup{key: k})
		}
		out[j].hosts = append(out[j].hosts, host(i))
	}
	return out
}

// maxNamed is how many hosts a group names before "+N more".
const maxNamed = 5

// named is "a, b, c +97 more".
func named(hosts []string) string {
	if len(hosts) > maxNamed {
		return strings.Join(hosts[:maxNamed], ", ") + fmt.Sprintf(" +%d more", len(hosts)-maxNamed)
	}
	return strings.Join(hosts, ", ")
}

// perCluster is "prod-1 40, prod-2 47".
func (d *Diff) perCluster(hosts []string) string { return report.ClusterCounts(hosts, d.clusters) }

// verb says a change for the sentence "87 hosts newly fail somaxconn".
var verbs = map[string]string{"Newly failing": "newly fail", "Newly passing": "newly pass", "Still failing": "still fail", "Other status changes": "change"}

// changeGroups writes a change section by rule and status change.
func (t textWriter) changeGroups(d *Diff, title string, cs []Change) {
	groups := groupBy(len(cs), func(i int) []string {
		return []string{cs[i].Rule, string(cs[i].Severity), status(cs[i].OldStatus) + " → " + status(cs[i].NewStatus)}
	}, func(i int) string { return cs[i].Host })
	t.heading(title, len(cs))
	if len(groups) == 0 {
		return
	}
	var rows [][]string
	for _, g := range groups {
		what := fmt.Sprintf("%s %s %s", words.Count(len(g.hosts), "host", "hosts"), verbs[title], g.key[0])
		rows = append(rows, []string{what, g.key[1], g.key[2], d.perCluster(g.hosts), named(g.hosts)})
	}
	t.table([]string{"CHANGE", "SEVERITY", "STATUS", "CLUSTERS", "HOSTS"}, rows)
}

// writeGrouped writes d's sections by group.
func writeGrouped(t textWriter, d *Diff) {
	t.changeGroups(d, "Newly failing", d.NewlyFailing)
	t.changeGroups(d, "Newly passing", d.NewlyPassing)
	t.changeGroups(d, "Still failing", d.StillFailing)
	t.changeGroups(d, "Other status changes", d.Other)
	t.hostCount("Hosts added", d, d.HostsAdded)
	t.hostCount("Hosts removed", d, d.HostsRemoved)
	facts := groupBy(len(d.Facts), func(i int) []string {
		return []string{d.Facts[i].Fact, cmp.Or(d.Facts[i].Old, "—"), cmp.Or(d.Facts[i].New, "—")}
	}, func(i int) string { return d.Facts[i].Host })
	var rows [][]string
	for _, g := range facts {
		rows = append(rows, []string{fmt.Sprint(len(g.hosts)), g.key[0], g.key[1], g.key[2], named(g.hosts)})
	}
	t.heading("Fact changes", len(d.Facts))
	if len(rows) > 0 {
		t.table([]string{"HOSTS", "FACT", "OLD", "NEW", "E.G."}, rows)
	}
	scores := groupBy(len(d.Scores), func(i int) []string {
		return []string{fmt.Sprintf("%+d", d.Scores[i].New-d.Scores[i].Old)}
	}, func(i int) string { return d.Scores[i].Host })
	rows = nil
	for _, g := range scores {
		rows = append(rows, []string{fmt.Sprint(len(g.hosts)), g.key[0], named(g.hosts)})
	}
	t.heading("Scores changed", len(d.Scores))
	if len(rows) > 0 {
		t.table([]string{"HOSTS", "DELTA", "E.G."}, rows)
	}
}

// hostCount is a heading and the hosts counted per cluster, a few named.
func (t textWriter) hostCount(title string, d *Diff, names []string) {
	t.heading(title, len(names))
	if len(names) > 0 {
		t.table([]string{"CLUSTERS", "HOSTS"}, [][]string{{d.perCluster(names), named(names)}})
	}
}
