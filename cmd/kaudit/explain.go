package main

import (
	"context"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/pipeline"
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
		return located.Hint(usageErr("explain needs one RULE-ID"), "kaudit rules lists them")
	}
	r, ok := rules.Lookup(args[0])
	if !ok {
		return usageErr("no rule %q (known: %s)", args[0], strings.Join(pipeline.RuleIDs(), ", "))
	}
	out, _ := e.Stdout.(*os.File)
	pipeline.WriteExplain(e.Stdout, r, termui.Width(0, os.Getenv, out)) // $COLUMNS, the terminal's, else 100
	return nil
}
