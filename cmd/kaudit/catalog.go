package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/pipeline"
)

// kaudit rules and kaudit explain: the catalog and one rule.

func rulesCommand(e env) *cli.Command {
	return &cli.Command{
		Name:   "rules",
		Usage:  "list the rule catalog",
		Action: func(c *cli.Context) error { return runRules(c.Context, c.Args().Slice(), e) },
	}
}

func runRules(_ context.Context, args []string, e env) error {
	if len(args) > 0 {
		return located.Hint(usageErr("rules takes no arguments"), "kaudit explain "+args[0]+" explains one rule")
	}
	pipeline.Catalog(e)
	return nil
}

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
	return pipeline.Explain(e, args[0])
}
