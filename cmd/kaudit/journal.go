package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What fix --apply and rollback share: the journal directory and the
// confirmation.

// journalDir resolves --journal-dir (default $XDG_STATE_HOME/kaudit/runs,
// else ~/.local/state/kaudit/runs) and creates it (0700).
func journalDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "kaudit", "runs")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", usageErr("cannot find the home directory for the run journal (%v): set --journal-dir", err)
			}
			dir = filepath.Join(home, ".local", "state", "kaudit", "runs")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", usageErr("journal directory: %v", err)
	}
	return dir, nil
}

// confirm asks question on a terminal; without one it refuses (exit 2)
// unless yes.
func confirm(e env, yes bool, question, flagHint string) (bool, error) {
	if yes {
		return true, nil
	}
	in, ok := e.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return false, usageErr("%s: stdin is not a terminal, so kaudit cannot ask: add --yes to go ahead; nothing changed", flagHint)
	}
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
