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
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	opErr := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	cases := []struct {
		err   error
		phase string
		kind  facts.ErrorKind
	}{
		{opErr(timeoutErr{}), "connect", facts.KindUnreachable},                            // SYNs blackholed
		{fmt.Errorf("dial: %w", os.ErrDeadlineExceeded), "connect", facts.KindUnreachable}, // same, as a deadline
		{context.DeadlineExceeded, "connect", facts.KindUnreachable},
		{opErr(syscall.ECONNREFUSED), "connect", facts.KindUnreachable},
		{opErr(syscall.EHOSTUNREACH), "connect", facts.KindUnreachable},
		{&net.DNSError{Name: "nope.invalid", Err: "no such host"}, "connect", facts.KindUnreachable},
		{os.ErrDeadlineExceeded, "handshake", facts.KindTimeout}, // TCP up, no banner
		{context.DeadlineExceeded, "gather", facts.KindTimeout},
		{context.Canceled, "gather", facts.KindTimeout}, // Ctrl-C
		{errors.New("ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey]"), "handshake", facts.KindAuth},
		{errors.New("ssh: handshake failed: ssh: no common algorithm for host key"), "handshake", facts.KindProtocol},
		{io.EOF, "session", facts.KindProtocol},
		{&Error{Kind: facts.KindHostKey, Msg: "changed"}, "handshake", facts.KindHostKey},
		// kaudit's own machine out of files, memory or disk: never the host (issue 34, row 9)
		{opErr(os.NewSyscallError("socket", syscall.EMFILE)), "connect", facts.KindLocal},
		{opErr(os.NewSyscallError("socket", syscall.ENFILE)), "connect", facts.KindLocal},
		{&os.PathError{Op: "open", Path: "/home/k/.ssh/id_ed25519", Err: syscall.EMFILE}, "handshake", facts.KindLocal},
		{fmt.Errorf("spool: %w", &os.PathError{Op: "write", Path: "/tmp/s", Err: syscall.ENOSPC}), "gather", facts.KindLocal},
		{opErr(syscall.ENOMEM), "session", facts.KindLocal},
	}
	for _, c := range cases {
		got := classify(c.err, c.phase)
		if got.Kind != c.kind {
			t.Errorf("classify(%v, %s) = %s (%s), want %s", c.err, c.phase, got.Kind, got.Msg, c.kind)
		}
	}
	if e := classify(context.Canceled, "gather"); e.Msg != "interrupted before this host finished" {
		t.Errorf("Ctrl-C message %q", e.Msg)
	}
}

func TestLimitedBufferCutsOnce(t *testing.T) {
	cuts := make(chan struct{}, 4)
	l := &limitedBuffer{max: 10, cut: func() { cuts <- struct{}{} }}
	for i := 0; i < 5; i++ {
		if n, err := l.Write([]byte("0123456")); n != 7 || err != nil {
			t.Fatalf("write %d: n=%d err=%v (the buffer must keep draining)", i, n, err)
		}
	}
	<-cuts
	if len(cuts) != 0 || !l.overflowed() || string(l.Bytes()) != "0123456" {
		t.Fatalf("cuts=%d overflowed=%v kept=%q", len(cuts)+1, l.overflowed(), l.Bytes())
	}
}

func TestShellCommandNeverPrompts(t *testing.T) {
	if got := shellCommand("sudo"); got != "sudo -n -- /bin/sh -s" {
		t.Errorf("become: %q", got)
	}
	if got := shellCommand(""); got != "/bin/sh -s" {
		t.Errorf("plain: %q", got)
	}
}

// The step is data on the error; the message is rendered from it, and a
// Target without a Step is the gather script.
func TestErrorStep(t *testing.T) {
	for _, c := range []struct {
		e          *Error
		step, want string
	}{
		{classify(context.DeadlineExceeded, Target{}.step()), "gather", "deadline exceeded during gather"},
		{classify(context.DeadlineExceeded, Target{Step: "the apply script"}.step()), "the apply script", "deadline exceeded during the apply script"},
		{classify(io.EOF, "the restore script"), "the restore script", "connection closed by the host during the restore script"},
		{NoExitStatus("", nil), "", "connection closed during gather without an exit status (sshd killed or network dropped?)"},
		{NoExitStatus("the apply script", nil), "the apply script", "connection closed during the apply script without an exit status (sshd killed or network dropped?)"},
		{classify(context.Canceled, "gather"), "", "interrupted before this host finished"},
	} {
		if c.e.Step != c.step || c.e.Msg != c.want || c.e.Error() != c.want {
			t.Errorf("step %q msg %q, want %q %q", c.e.Step, c.e.Msg, c.step, c.want)
		}
	}
}

// io.Copy into a limitedBuffer (how x/crypto/ssh fills stdout and stderr)
// keeps every byte up to the bound, and past it drains, cuts once and
// keeps no more than the bound.
func TestLimitedBufferReadFrom(t *testing.T) {
	type onlyReader struct{ io.Reader } // hides strings.Reader's WriteTo, as an SSH channel has none
	text := strings.Repeat("0123456789abcdef", 1000)
	l := &limitedBuffer{max: len(text)}
	if n, err := io.Copy(l, onlyReader{strings.NewReader(text)}); n != int64(len(text)) || err != nil || string(l.Bytes()) != text || l.overflowed() {
		t.Fatalf("within the bound: n=%d err=%v overflowed=%v, kept %d bytes", n, err, l.overflowed(), len(l.Bytes()))
	}
	cuts := make(chan struct{}, 4)
	l = &limitedBuffer{max: 5000, cut: func() { cuts <- struct{}{} }}
	if n, err := io.Copy(l, onlyReader{strings.NewReader(text)}); n != int64(len(text)) || err != nil {
		t.Fatalf("past the bound: n=%d err=%v (the buffer must keep draining)", n, err)
	}
	<-cuts
	if len(cuts) != 0 || !l.overflowed() || len(l.Bytes()) > 5000 || !strings.HasPrefix(text, string(l.Bytes())) {
		t.Fatalf("cuts=%d overflowed=%v kept %d bytes", len(cuts)+1, l.overflowed(), len(l.Bytes()))
	}
}
