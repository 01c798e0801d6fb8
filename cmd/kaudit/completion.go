package main

import (
	"embed"
	"io"

	"github.com/urfave/cli/v2"
)

// Shell completion is urfave/cli's own: with EnableBashCompletion every
// command answers --generate-bash-completion with its subcommands and
// flags; the bash and zsh scripts in completion/ (urfave/cli v2's
// autocomplete/bash_autocomplete and zsh_autocomplete, MIT licence, with
// PROG set) ask it, and fish gets the app's own ToFishCompletion.
const completionFlag = "--generate-bash-completion"

//go:embed completion/kaudit.bash completion/kaudit.zsh
var completionFiles embed.FS

func completionCommand(e env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script: source <(kaudit completion bash)  (also zsh, fish)",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			return writeCompletion(e.Stdout, c.App, c.Args().First())
		},
	}
}

func writeCompletion(w io.Writer, app *cli.App, shell string) error {
	switch shell {
	case "bash", "zsh":
		b, err := completionFiles.ReadFile("completion/kaudit." + shell)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, s)
		return err
	}
	return usageErr("completion needs one of bash, zsh, fish (got %q)", shell)
}

// completing reports whether the shell is asking for completions: then
// the arguments must stay in the order typed (the flag is last).
func completing(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == completionFlag
}
