package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kaudit/kaudit/pipeline"
)

// What fix --apply and rollback share: the journal directory and the
// confirmation.

// journalDir is --journal-dir, or pipeline.JournalDir's default, created.
func journalDir(flag string) (string, error) {
	dir, err := pipeline.JournalDir(flag)
	if errors.Is(err, pipeline.ErrNoHome) {
		return "", usageErr("%v: set --journal-dir", err)
	}
	if err != nil {
		return "", usage(err)
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
