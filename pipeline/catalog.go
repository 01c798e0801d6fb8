package pipeline

import (
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/kaudit/kaudit/rules"
)

// What kaudit rules and kaudit explain print: the catalog and one rule.

// WriteCatalog lists every rule of the catalog: ID, severity, title.
func WriteCatalog(w io.Writer) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"ID", "Severity", "Title"})
	for _, r := range rules.Catalog() {
		t.AppendRow(table.Row{r.ID, r.Severity, r.Title})
	}
	t.Render()
	fmt.Fprintln(w, "kaudit explain ID shows a rule's rationale, thresholds and references.")
}

// RuleIDs lists the catalog's rule IDs in catalog order.
func RuleIDs() []string {
	var ids []string
	for _, r := range rules.Catalog() {
		ids = append(ids, r.ID)
	}
	return ids
}

// WriteExplain writes a rule's rationale, its thresholds in the default
// profile, its fix and its references, prose folded to 100 columns.
func WriteExplain(w io.Writer, r rules.Rule) {
	fmt.Fprintf(w, "%s — %s\nseverity: %s\n\n", r.ID, r.Title, r.Severity)
	fmt.Fprintln(w, wrap(r.Rationale))
	if len(r.Thresholds) > 0 {
		p := rules.DefaultProfile()
		fmt.Fprintln(w, "\nthresholds (default profile; override with --profile FILE or profile: in the inventory):")
		for _, th := range r.Thresholds {
			fmt.Fprintf(w, "  %s: %v\n", th, p.Value(th))
		}
	}
	if r.Fix != "" {
		fmt.Fprintf(w, "\nfix:\n%s\n", wrap(r.Fix))
	}
	if len(r.References) > 0 {
		fmt.Fprintln(w, "\nreferences:")
		for _, ref := range r.References {
			fmt.Fprintf(w, "  - %s\n    %s\n", ref.Title, ref.URL)
		}
	}
}

// wrap folds prose to 100 columns without trailing padding.
func wrap(s string) string {
	lines := strings.Split(text.WrapSoft(strings.TrimSpace(s), 100), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
