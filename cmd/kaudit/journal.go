package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kaudit/kaudit/internal/ui"
	"github.com/kaudit/kaudit/pipeline"
)

// What fix --apply and rollback share: the journal directory, the
// confirmation and Ctrl-C.

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

// confirm asks question on a terminal, saying so on stdout when the
// answer is no; without a terminal it refuses (exit 2) unless yes.
func confirm(e env, yes bool, question, flagHint string) (bool, error) {
	if yes {
		return true, nil
	}
	ok, asked := ui.Ask(e.stdin, e.stderr, question)
	if !asked {
		return false, usageErr("%s: stdin is not a terminal, so kaudit cannot ask: add --yes to go ahead; nothing changed", flagHint)
	}
	if !ok {
		fmt.Fprintln(e.stdout, "not confirmed: nothing changed")
	}
	return ok, nil
}

// interruptible is ctx, also ended by Ctrl-C (SIGINT) or SIGTERM: a scan
// reports what it gathered, an apply or rollback starts no further host.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
