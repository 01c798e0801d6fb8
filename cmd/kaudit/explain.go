package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/termui"
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
	out, _ := w.(*os.File)
	width := termui.Width(0, os.Getenv, out) // $COLUMNS, the terminal's, else 100
	fmt.Fprintf(w, "%s\nseverity: %s\n\n", strings.Join(termui.Wrap(r.ID+" — "+r.Title, width, 4), "\n"), r.Severity)
	fmt.Fprintln(w, wrap(r.Rationale, width))
	if len(r.Thresholds) > 0 {
		p := rules.DefaultProfile()
		fmt.Fprintln(w, "\nthresholds (default profile; override with --profile FILE or profile: in the inventory):")
		for _, th := range r.Thresholds {
			fmt.Fprintf(w, "  %s: %v\n", th, p.Value(th))
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
	return nil
}

// wrap folds prose to width columns without trailing padding.
func wrap(s string, width int) string {
	lines := strings.Split(text.WrapSoft(strings.TrimSpace(s), width), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
