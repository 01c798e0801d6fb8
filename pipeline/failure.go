package pipeline

import (
	"fmt"

	"github.com/kaudit/kaudit/internal/located"
)

// Failure is a command that ran to its end with a verdict other than
// Pass: findings, unaudited hosts, an interruption, a host not changed as
// planned. Err, when set, is what to tell the person. Any other error a
// command returns means it could not run as asked (a usage or input
// error: the flags, an inventory, a file).
type Failure struct {
	Verdict Verdict
	Err     error
}

func (f *Failure) Error() string {
	if f.Err == nil {
		return fmt.Sprintf("verdict %d", f.Verdict)
	}
	return f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

// fail is a *Failure with verdict v and the message format.
func fail(v Verdict, format string, args ...any) error {
	return &Failure{Verdict: v, Err: fmt.Errorf(format, args...)}
}

// failHint is fail with what to do about it (located.Hint).
func failHint(v Verdict, hint, format string, args ...any) error {
	return &Failure{Verdict: v, Err: located.Hint(fmt.Errorf(format, args...), hint)}
}
