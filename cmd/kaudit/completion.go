package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

// Shell completion is urfave/cli's own: with EnableBashCompletion every
// command answers --generate-bash-completion with its subcommands and
// flags; the bash and zsh scripts below (urfave/cli v2's
// autocomplete/bash_autocomplete and zsh_autocomplete, MIT licence, with
// PROG set) ask it, and fish gets the app's own ToFishCompletion.
const completionFlag = "--generate-bash-completion"

const bashCompletion = `# kaudit bash completion: source <(kaudit completion bash)
_kaudit_init_completion() {
  COMPREPLY=()
  _get_comp_words_by_ref "$@" cur prev words cword
}
_kaudit_bash_autocomplete() {
  if [[ "${COMP_WORDS[0]}" != "source" ]]; then
    local cur opts base words
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    if declare -F _init_completion >/dev/null 2>&1; then
      _init_completion -n "=:" || return
    else
      _kaudit_init_completion -n "=:" || return
    fi
    words=("${words[@]:0:$cword}")
    if [[ "$cur" == "-"* ]]; then
      requestComp="${words[*]} ${cur} --generate-bash-completion"
    else
      requestComp="${words[*]} --generate-bash-completion"
    fi
    opts=$(eval "${requestComp}" 2>/dev/null)
    COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
    return 0
  fi
}
complete -o bashdefault -o default -o nospace -F _kaudit_bash_autocomplete kaudit
`

const zshCompletion = `#compdef kaudit
# kaudit zsh completion: source <(kaudit completion zsh)
_kaudit_zsh_autocomplete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _kaudit_zsh_autocomplete kaudit
`

func completionCommand(e env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script: source <(kaudit completion bash)  (also zsh, fish)",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			return writeCompletion(e.stdout, c.App, c.Args().First())
		},
	}
}

func writeCompletion(w io.Writer, app *cli.App, shell string) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(w, bashCompletion)
		return err
	case "zsh":
		_, err := io.WriteString(w, zshCompletion)
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
