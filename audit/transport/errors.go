package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
)

// DefaultStep is how errors name the script run when the Target names
// none: the audit's gather script.
const DefaultStep = "gather"

// Error is a classified per-host failure.
type Error struct {
	Kind facts.ErrorKind
	Msg  string // the message; when it names a step, rendered from Step
	// Step is the phase or script run the failure happened in, as the
	// message names it: "connect", "handshake", "session", "gather" or the
	// Target's Step ("the apply script"). "" when the message names none.
	Step string
	Err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func newErr(kind facts.ErrorKind, err error, format string, args ...any) *Error {
	return local(&Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: err})
}

// local makes e a KindLocal error, with what to do, when its cause is a
// fault of kaudit's own machine (fanout.LocalFault): whatever step it
// happened in, the host is not at fault (issue 34, row 9: a flood of
// connections to kaudit serve took its open files and 20 reachable hosts
// were counted unreachable).
func local(e *Error) *Error {
	if n := fanout.LocalFault(e.Err); n != 0 {
		e.Kind = facts.KindLocal
		e.Msg = located.WithHint(e.Msg+" (on kaudit's side: "+n.Error()+")", fanout.LocalFaultHint)
	}
	return e
}

// stepErr is an error whose message names the step it happened in: the
// first verb of format is the step (def when step is "").
func stepErr(kind facts.ErrorKind, err error, step, def, format string, args ...any) *Error {
	return local(&Error{Kind: kind, Step: step, Err: err, Msg: fmt.Sprintf(format, append([]any{cmp.Or(step, def)}, args...)...)})
}

// NoExitStatus is the error of a script run whose connection closed
// before the host sent the script's exit status.
func NoExitStatus(step string, err error) *Error {
	return stepErr(facts.KindProtocol, err, step, DefaultStep, "connection closed during %s without an exit status (sshd killed or network dropped?)")
}

// AsError returns err as an *Error, classifying unknown errors.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return classify(err, "")
}

// classify maps a low-level error to a kind. phase is "connect",
// "handshake", "session" or the script's step (Target.step) and only
// sharpens the message.
func classify(err error, phase string) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	switch {
	case phase == "connect" && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isNetTimeout(err)):
		return newErr(facts.KindUnreachable, err, "TCP connect timed out (host down, or SYNs dropped by a firewall or route)")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		if phase == "handshake" {
			return newErr(facts.KindTimeout, err, "no SSH handshake before the deadline (the port accepts TCP but the server never finished the SSH banner/key exchange)")
		}
		return stepErr(facts.KindTimeout, err, phase, "the audit", "deadline exceeded during %s")
	case errors.Is(err, context.Canceled):
		return newErr(facts.KindTimeout, err, "interrupted before this host finished")
	case strings.Contains(msg, "unable to authenticate"), strings.Contains(msg, "no supported methods remain"):
		return newErr(facts.KindAuth, err, "%s", located.WithHint("authentication refused: "+trimSSH(msg), "check the user, ssh-agent keys or identity_files"))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if phase == "connect" {
			return newErr(facts.KindUnreachable, err, "TCP connect timed out (host down or SYNs dropped by a firewall)")
		}
		return stepErr(facts.KindTimeout, err, phase, "the audit", "i/o timeout during %s")
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return newErr(facts.KindUnreachable, err, "connection refused (is sshd running on that port?)")
	}
	if errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return newErr(facts.KindUnreachable, err, "no route to host")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return newErr(facts.KindUnreachable, err, "cannot resolve host name %q", dnsErr.Name)
	}
	if phase == "connect" {
		return newErr(facts.KindUnreachable, err, "connect: %s", msg)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return stepErr(facts.KindProtocol, err, phase, "the audit", "connection closed by the host during %s")
	}
	return stepErr(facts.KindProtocol, err, phase, "ssh", "%s: %s", trimSSH(msg))
}

func trimSSH(s string) string {
	s = strings.TrimPrefix(s, "ssh: handshake failed: ")
	return strings.TrimPrefix(s, "ssh: ")
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
