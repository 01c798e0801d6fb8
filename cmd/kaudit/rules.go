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

func runRules(_ context.Context, _ []string, e env) error {
	pipeline.WriteCatalog(e.stdout)
	return nil
}
