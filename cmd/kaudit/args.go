package main

import (
	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/internal/argv"
)

// interspersed moves a subcommand's flags before its positional arguments
// (argv.FlagsFirst), so `kaudit scan inventory.yaml --format json` works as
// users type it (urfave/cli v2 stops parsing flags at the first positional
// argument). Everything after "--" is left alone.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	takesValue := func(name string) bool {
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				if n == name {
					_, isBool := f.(*cli.BoolFlag)
					return !isBool
				}
			}
		}
		return false
	}
	return append([]string{args[0], args[1]}, argv.FlagsFirst(args[2:], takesValue)...)
}
