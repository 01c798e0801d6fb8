package main

import (
	"errors"

	"github.com/kaudit/kaudit/internal/ui"
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
	ok, asked := ui.Ask(e.stdin, e.stderr, question)
	if !asked {
		return false, usageErr("%s: stdin is not a terminal, so kaudit cannot ask: add --yes to go ahead; nothing changed", flagHint)
	}
	return ok, nil
}
