package main

import "github.com/urfave/cli/v2"

func fixCommand() *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "print the remediation plan per host (nothing changes without --apply)",
		ArgsUsage: "INVENTORY",
		Flags:     scanFlags(),
		Action: func(c *cli.Context) error {
			return usageErr("fix: not implemented yet")
		},
	}
}
