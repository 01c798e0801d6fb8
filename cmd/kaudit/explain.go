package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/rules"
)

func explainCommand(e env) *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "show a rule's rationale, thresholds, fix and references",
		ArgsUsage: "RULE-ID",
		Action:    func(c *cli.Context) error { return runExplain(c.Context, c.Args().Slice(), e) },
	}
}

func runExplain(_ context.Context, args []string, e env) error {
	if len(args) != 1 {
		return usageErr("explain needs one RULE-ID (kaudit rules lists them)")
	}
	id := args[0]
	r, ok := rules.Lookup(id)
	if !ok {
		var ids []string
		for _, r := range rules.Catalog() {
			ids = append(ids, r.ID)
		}
		return usageErr("no rule %q (known: %s)", id, strings.Join(ids, ", "))
	}
	w := e.stdout
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
	return nil
}

// wrap folds prose to 100 columns without trailing padding.
func wrap(s string) string {
	lines := strings.Split(text.WrapSoft(strings.TrimSpace(s), 100), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
