package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a subcommand's flags before its positional arguments,
// so `kaudit scan inventory.yaml --format json` works as users type it
// (urfave/cli v2 stops parsing flags at the first positional argument).
// Everything after "--" is left alone.
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
	var flags, pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			pos = append(pos, rest[i:]...)
			i = len(rest)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue(name) && i+1 < len(rest) {
				i++
				flags = append(flags, rest[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, pos...)
}
