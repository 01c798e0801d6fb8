package main

import (
	"context"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termui"
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
		return located.Hint(usageErr("rules takes no arguments"), "kaudit explain "+args[0]+" explains one rule")
	}
	out, _ := e.Stdout.(*os.File)
	pipeline.WriteCatalog(e.Stdout, termui.Width(0, os.Getenv, out)) // $COLUMNS, the terminal's, else 100
	return nil
}
