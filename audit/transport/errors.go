package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
)

// Error kinds, as they appear in the JSON report.
const (
	KindUnreachable = "unreachable"
	KindAuth        = "auth"
	KindHostKey     = "hostkey"
	KindTimeout     = "timeout"
	KindProtocol    = "protocol"
)

// Error is a classified per-host failure.
type Error struct {
	Kind string
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func newErr(kind string, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: err}
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
// "handshake" or "session" and only sharpens the message.
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
		return newErr(KindUnreachable, err, "TCP connect timed out (host down, or SYNs dropped by a firewall or route)")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		if phase == "handshake" {
			return newErr(KindTimeout, err, "no SSH handshake before the deadline (the port accepts TCP but the server never finished the SSH banner/key exchange)")
		}
		return newErr(KindTimeout, err, "deadline exceeded during %s", orDefault(phase, "the audit"))
	case errors.Is(err, context.Canceled):
		return newErr(KindTimeout, err, "interrupted before this host finished")
	case strings.Contains(msg, "unable to authenticate"), strings.Contains(msg, "no supported methods remain"):
		return newErr(KindAuth, err, "authentication refused: %s (check the user, ssh-agent keys or identity_files)", trimSSH(msg))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if phase == "connect" {
			return newErr(KindUnreachable, err, "TCP connect timed out (host down or SYNs dropped by a firewall)")
		}
		return newErr(KindTimeout, err, "i/o timeout during %s", orDefault(phase, "the audit"))
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return newErr(KindUnreachable, err, "connection refused (is sshd running on that port?)")
	}
	if errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return newErr(KindUnreachable, err, "no route to host")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return newErr(KindUnreachable, err, "cannot resolve host name %q", dnsErr.Name)
	}
	if phase == "connect" {
		return newErr(KindUnreachable, err, "connect: %s", msg)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed) {
		return newErr(KindProtocol, err, "connection closed by the host during %s", orDefault(phase, "the audit"))
	}
	return newErr(KindProtocol, err, "%s: %s", orDefault(phase, "ssh"), trimSSH(msg))
}

func trimSSH(s string) string {
	s = strings.TrimPrefix(s, "ssh: handshake failed: ")
	return strings.TrimPrefix(s, "ssh: ")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
