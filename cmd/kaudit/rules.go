package main

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/pipeline"
)

func rulesCommand(e env) *cli.Command {
	return &cli.Command{
		Name:   "rules",
		Usage:  "list the rule catalog",
		Action: func(c *cli.Context) error { return runRules(c.Context, c.Args().Slice(), e) },
	}
}

func runRules(_ context.Context, args []string, e env) error {
	if len(args) > 0 {
		return usageErr("rules takes no arguments (kaudit explain %s explains one rule)", args[0])
	}
	pipeline.WriteCatalog(e.Stdout)
	return nil
}
