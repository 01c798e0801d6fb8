package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/ui"
)

// Console is where a command talks with the person who runs it: the
// streams (stdout carries the report, plan or listing; stderr warnings,
// questions and the progress bar) and the clock waivers and run IDs are
// read from. Questions are asked only when Stdin is a terminal.
type Console struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
}

// Warn writes "kaudit: warning: MESSAGE" on Stderr (a library's Warn func).
func (c Console) Warn(msg string) { fmt.Fprintf(c.Stderr, "kaudit: warning: %s\n", msg) }

// Warnf is Warn with a format.
func (c Console) Warnf(format string, args ...any) { c.Warn(fmt.Sprintf(format, args...)) }

// Ask asks question on the terminal (yes: it does not ask); without a
// terminal the answer is refusal, an error (fix, rollback, trust).
func (c Console) Ask(yes bool, question string, refusal error) (bool, error) {
	if yes {
		return true, nil
	}
	ok, asked := ui.Ask(c.Stdin, c.Stderr, question)
	if !asked {
		return false, refusal
	}
	return ok, nil
}

// Confirm is Ask before changing hosts (fix --apply, rollback), saying so
// on Stdout when the answer is no; without a terminal it refuses (a usage
// error naming flagHint) unless yes.
func (c Console) Confirm(yes bool, question, flagHint string) (bool, error) {
	ok, err := c.Ask(yes, question, located.Hint(fmt.Errorf("%s: stdin is not a terminal, so kaudit cannot ask; nothing changed", flagHint), "add --yes to go ahead"))
	if err == nil && !ok {
		fmt.Fprintln(c.Stdout, "not confirmed: nothing changed")
	}
	return ok, err
}

// interruptible is ctx, also ended by Ctrl-C (SIGINT) or SIGTERM: a scan
// reports what it gathered, an apply or rollback starts no further host.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
