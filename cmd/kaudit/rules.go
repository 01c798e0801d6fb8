package main

import (
	"context"
	"fmt"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/rules"
)

func rulesCommand(e env) *cli.Command {
	return &cli.Command{
		Name:   "rules",
		Usage:  "list the rule catalog",
		Action: func(c *cli.Context) error { return runRules(c.Context, c.Args().Slice(), e) },
	}
}

func runRules(_ context.Context, _ []string, e env) error {
	t := table.NewWriter()
	t.SetOutputMirror(e.stdout)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"ID", "Severity", "Title"})
	for _, r := range rules.Catalog() {
		t.AppendRow(table.Row{r.ID, r.Severity, r.Title})
	}
	t.Render()
	fmt.Fprintln(e.stdout, "kaudit explain ID shows a rule's rationale, thresholds and references.")
	return nil
}
