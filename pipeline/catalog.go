package pipeline

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/rules"
)

// What kaudit rules and kaudit explain print: the catalog and one rule.

// Catalog is kaudit rules: writeCatalog on c's stdout, for its width
// ($COLUMNS, the terminal's, else 100).
func Catalog(c Console) {
	writeCatalog(c.Stdout, stdoutWidth(c))
}

// Explain is kaudit explain ID: writeExplain of the rule on c's stdout;
// an unknown ID is an error that lists the known ones.
func Explain(c Console, id string) error {
	r, ok := rules.Lookup(id)
	if !ok {
		return fmt.Errorf("no rule %q (known: %s)", id, strings.Join(rules.IDs(), ", "))
	}
	writeExplain(c.Stdout, r, stdoutWidth(c))
	return nil
}

// stdoutWidth is the width c's stdout is laid out for: $COLUMNS, the
// terminal's, else 100.
func stdoutWidth(c Console) int {
	out, _ := c.Stdout.(*os.File)
	return termui.Width(0, os.Getenv, out)
}

// writeCatalog lists every rule of the catalog: the host rules, then the
// cluster rules (judged by asking the cluster, scan --bootstrap); each with
// ID, severity, title, the titles folded so that the tables fit width
// columns (as far as the IDs allow: an ID is never cut).
func writeCatalog(w io.Writer, width int) {
	catalogTable(w, rules.Catalog(), width)
	fmt.Fprintf(w, "\n%s\n", wrap("Cluster rules (scan --bootstrap: judged on the Kafka cluster, reported in the report's cluster section):", width))
	catalogTable(w, rules.ClusterCatalog(), width)
	fmt.Fprintln(w, "kaudit explain ID shows a rule's rationale, thresholds and references.")
}

func catalogTable(w io.Writer, rs []rules.Rule, width int) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"ID", "Severity", "Title"})
	idw, sevw := len("ID"), len("Severity")
	for _, r := range rs {
		t.AppendRow(table.Row{r.ID, r.Severity, r.Title})
		idw, sevw = max(idw, termui.StringWidth(r.ID)), max(sevw, termui.StringWidth(string(r.Severity)))
	}
	const borders = 10 // "│ " + " │ " + " │ " + " │" of StyleLight's three columns
	t.SetColumnConfigs([]table.ColumnConfig{{Name: "Title", WidthMax: max(width-idw-sevw-borders, 20), WidthMaxEnforcer: text.WrapSoft}})
	t.Render()
}

// writeExplain writes a rule's rationale, its thresholds in the default
// profile, its fix and its references, prose folded to width columns
// (a reference's URL is never cut).
func writeExplain(w io.Writer, r rules.Rule, width int) {
	fmt.Fprintf(w, "%s\nseverity: %s\n\n", strings.Join(termui.Wrap(r.ID+" — "+r.Title, width, 4), "\n"), r.Severity)
	fmt.Fprintln(w, wrap(r.Rationale, width))
	if len(r.Thresholds) > 0 {
		p := rules.DefaultProfile()
		fmt.Fprintf(w, "\n%s\n", wrap("thresholds (default profile; override with --profile FILE or profile: in the inventory):", width))
		for _, th := range r.Thresholds {
			fmt.Fprintf(w, "  %s: %v\n", th, p.Value(th))
		}
	}
	if len(r.Peers) > 0 {
		fmt.Fprintf(w, "\n%s\n", wrap("compared across a cluster's brokers (the catalog's peers: list):", width))
		for _, p := range r.Peers {
			rack := ""
			if p.WithinRack {
				rack = ", within a rack"
			}
			fmt.Fprintf(w, "  %s (%s%s)\n", p.Fact, p.Severity, rack)
		}
	}
	if r.Fix != "" {
		fmt.Fprintf(w, "\nfix:\n%s\n", wrap(r.Fix, width))
	}
	if len(r.References) > 0 {
		fmt.Fprintln(w, "\nreferences:")
		for _, ref := range r.References {
			fmt.Fprintf(w, "  - %s\n    %s\n", strings.Join(termui.Wrap(ref.Title, width-4, 0), "\n    "), ref.URL)
		}
	}
}

// wrap folds prose to width columns without trailing padding.
func wrap(s string, width int) string {
	lines := strings.Split(text.WrapSoft(strings.TrimSpace(s), width), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
