// Package argv reorders a command line so that flags given after
// positional arguments are still parsed as flags: `kaudit scan inv.yaml
// --format json` as users type it, for a flag parser (urfave/cli v2) that
// stops at the first positional argument.
package argv

import "strings"

// FlagsFirst returns args (a subcommand's arguments, without the program
// and subcommand names) with every flag moved before the positional
// arguments, in order. takesValue says whether a flag name (without
// dashes) consumes the next argument; a flag written NAME=VALUE never
// does. Everything from "--" on is left where it is, after the flags.
func FlagsFirst(args []string, takesValue func(name string) bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(flags, append(pos, args[i:]...)...)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue(name) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	return append(flags, pos...)
}
