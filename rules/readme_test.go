package rules

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var readmeRow = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\|.*\\| ([a-z]+) \\|$")

// The headers of docs/rules.md's two generated tables: the host rules
// (Catalog) and the cluster rules (ClusterCatalog).
const (
	hostTableHeader    = "| ID | checks | severity |"
	clusterTableHeader = "| cluster rule ID | checks | severity |"
)

// ruleTableProblems compares a README's rule table (the one under header:
// "| `ID` | checks | severity |" rows) with the catalog cat: every rule,
// in catalog order, with the catalog's severity, and no other.
func ruleTableProblems(readme, header string, cat []Rule) []string {
	var ids, problems []string
	sev := map[string]string{}
	in := false
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, header) {
			in = true
			continue
		}
		if !in || strings.HasPrefix(l, "|---") {
			continue
		}
		if !strings.HasPrefix(l, "|") {
			break
		}
		m := readmeRow.FindStringSubmatch(l)
		if m == nil {
			problems = append(problems, fmt.Sprintf("row %q is not | `ID` | checks | severity |", l))
			continue
		}
		ids = append(ids, m[1])
		sev[m[1]] = m[2]
	}
	if !in {
		return []string{"no rule table (" + header + ")"}
	}
	var want []string
	known := map[string]bool{}
	for _, r := range cat {
		want = append(want, r.ID)
		known[r.ID] = true
		if s, ok := sev[r.ID]; !ok {
			problems = append(problems, "misses catalog rule "+r.ID)
		} else if s != string(r.Severity) {
			problems = append(problems, fmt.Sprintf("%s is %s, the catalog says %s", r.ID, s, r.Severity))
		}
	}
	for _, id := range ids {
		if !known[id] {
			problems = append(problems, "lists "+id+", which the catalog does not have")
		}
	}
	if len(problems) == 0 && strings.Join(ids, " ") != strings.Join(want, " ") {
		problems = append(problems, fmt.Sprintf("order %v, want the catalog's %v", ids, want))
	}
	return problems
}

var updateReadme = flag.Bool("update-readme", false, "rewrite docs/rules.md's rule table from the catalog (a new rule's row says its title)")

// rewriteRuleTable is readme with its rule table under header rebuilt
// from the catalog cat: in catalog order, each row's checks text kept (a
// new rule's is its title), the catalog's severity.
func rewriteRuleTable(readme, header string, cat []Rule) string {
	lines := strings.Split(readme, "\n")
	start, end := -1, -1
	text := map[string]string{}
	for i, l := range lines {
		if strings.HasPrefix(l, header) {
			start = i
			continue
		}
		if start < 0 || end >= 0 || strings.HasPrefix(l, "|---") {
			continue
		}
		if !strings.HasPrefix(l, "|") {
			end = i
			continue
		}
		if m := readmeRow.FindStringSubmatch(l); m != nil {
			cells := strings.Split(l, " | ")
			text[m[1]] = strings.Join(cells[1:len(cells)-1], " | ")
		}
	}
	if start < 0 {
		return readme
	}
	if end < 0 {
		end = len(lines)
	}
	rows := []string{lines[start], "|---|---|---|"}
	for _, r := range cat {
		checks, ok := text[r.ID]
		if !ok {
			checks = strings.ReplaceAll(r.Title, "|", "\\|")
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s |", r.ID, checks, r.Severity))
	}
	return strings.Join(append(append(lines[:start:start], rows...), lines[end:]...), "\n")
}

// ruleTableDoc is the page that holds the generated rule table (it moved
// from the README to docs/rules.md; the test keeps its name and flag).
const ruleTableDoc = "../docs/rules.md"

// TestReadmeRuleTable: docs/rules.md's rule tables are the catalog's, the
// host rules' and the cluster rules' (go test ./rules -run
// TestReadmeRuleTable -update-readme rewrites them).
func TestReadmeRuleTable(t *testing.T) {
	b, err := os.ReadFile(ruleTableDoc)
	if err != nil {
		t.Fatal(err)
	}
	tables := []struct {
		header string
		cat    []Rule
	}{{hostTableHeader, Catalog()}, {clusterTableHeader, ClusterCatalog()}}
	if *updateReadme {
		for _, tb := range tables {
			b = []byte(rewriteRuleTable(string(b), tb.header, tb.cat))
		}
		if err := os.WriteFile(ruleTableDoc, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range tables {
		for _, p := range ruleTableProblems(string(b), tb.header, tb.cat) {
			t.Errorf("%s rule table %s: %s", ruleTableDoc, tb.header, p)
		}
	}
}

// TestRuleTableProblems: a missing rule, a stale severity, an extra row
// and a wrong order are each caught.
func TestRuleTableProblems(t *testing.T) {
	cat := []Rule{{ID: "a", Severity: High}, {ID: "b", Severity: Low}}
	head := "# x\n\n| ID | checks | severity |\n|---|---|---|\n"
	for _, c := range []struct{ name, table, want string }{
		{"good", "| `a` | x | high |\n| `b` | y | low |\n\ntext", ""},
		{"missing rule", "| `a` | x | high |\n", "misses catalog rule b"},
		{"stale severity", "| `a` | x | medium |\n| `b` | y | low |\n", "a is medium, the catalog says high"},
		{"extra row", "| `a` | x | high |\n| `b` | y | low |\n| `c` | z | low |\n", "lists c, which the catalog does not have"},
		{"order", "| `b` | y | low |\n| `a` | x | high |\n", "order [b a]"},
		{"bad row", "| a | x | high |\n| `b` | y | low |\n", "is not | `ID` | checks | severity |"},
	} {
		got := strings.Join(ruleTableProblems(head+c.table, hostTableHeader, cat), "; ")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want %q", c.name, got, c.want)
		}
		if c.name == "bad row" {
			continue
		}
		fixed := rewriteRuleTable(head+c.table, hostTableHeader, append(cat, Rule{ID: "new", Title: "a | new rule", Severity: Info}))
		if p := ruleTableProblems(fixed, hostTableHeader, append(cat, Rule{ID: "new", Severity: Info})); len(p) != 0 || !strings.Contains(fixed, "| `new` | a \\| new rule | info |") {
			t.Errorf("%s: rewritten table still has %v:\n%s", c.name, p, fixed)
		}
	}
	if got := rewriteRuleTable(head+"| `a` | x | high |\n| `b` | y | low |\n\ntext", hostTableHeader, cat); got != head+"| `a` | x | high |\n| `b` | y | low |\n\ntext" {
		t.Errorf("a table that is right is rewritten:\n%s", got)
	}
}
