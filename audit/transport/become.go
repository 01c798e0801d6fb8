package transport

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/kaudit/kaudit/audit/facts"
)

// BecomePassword is the sudo password given once with --ask-become-pass.
// It is only ever written to sudo's standard input (see remoteInput): it
// never appears on a command line, and every way of printing it prints
// "[redacted]".
type BecomePassword struct{ b []byte }

// NewBecomePassword checks and wraps a password read from a terminal. A
// newline or NUL would break the framing of sudo's standard input.
func NewBecomePassword(p []byte) (*BecomePassword, error) {
	switch {
	case len(p) == 0:
		return nil, errors.New("empty become password")
	case bytes.ContainsAny(p, "\n\r\x00"):
		return nil, errors.New("the become password contains a newline or NUL, which sudo -S cannot read")
	}
	return &BecomePassword{b: bytes.Clone(p)}, nil
}

func (*BecomePassword) String() string   { return "[redacted]" }
func (*BecomePassword) GoString() string { return "[redacted]" }

// Format makes %v, %+v, %#v, %s and %q all print "[redacted]".
func (*BecomePassword) Format(f fmt.State, _ rune) { io.WriteString(f, "[redacted]") }

// MarshalJSON never reveals the password either.
func (*BecomePassword) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// exitFraming is the exit status of the become wrapper when the marker line
// never came: stdin was not what kaudit sent.
const exitFraming = 97

// remoteInput returns the remote command line and its standard input for a
// script. The script always arrives on stdin, so nothing from the inventory
// is interpolated into the command line.
//
// With a become password the input is three parts:
//
//	PASSWORD\n     read by sudo -S (one byte at a time, so nothing more)
//	MARKER\n       a random line: the wrapper shell reads lines until it,
//	SCRIPT         so whether sudo asked or not (NOPASSWD, cached
//	               credentials), the password is never run as a command
//
// and the command is
//
//	sudo -S -p '' -- /bin/sh -c 'read up to the marker; exec /bin/sh -s'
//
// A wrong password makes sudo fail with "incorrect password attempt" (it
// reads its retries from the same stdin, which ends: no hang).
func remoteInput(become string, pw *BecomePassword, script []byte) (string, io.Reader) {
	if become != "sudo" || pw == nil {
		return shellCommand(become), bytes.NewReader(script)
	}
	marker := newMarker()
	wrapper := `IFS= read -r l || exit 97; [ "$l" = ` + marker + ` ] || IFS= read -r l || exit 97; [ "$l" = ` + marker + ` ] || exit 97; exec /bin/sh -s`
	cmd := "sudo -S -p '' -- /bin/sh -c '" + wrapper + "'"
	head := make([]byte, 0, len(pw.b)+len(marker)+2)
	head = append(append(head, pw.b...), '\n')
	head = append(append(head, marker...), '\n')
	return cmd, io.MultiReader(bytes.NewReader(head), bytes.NewReader(script))
}

func newMarker() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "kaudit-become-" + hex.EncodeToString(b)
}

// becomeFailure classifies a failed sudo from its stderr; nil when the
// failure is not sudo's.
func becomeFailure(t Target, out *Output) error {
	if t.Become != "sudo" {
		return nil
	}
	switch {
	case bytes.Contains(out.Stderr, []byte("password is required")) || bytes.Contains(out.Stderr, []byte("a terminal is required")):
		return newErr(facts.KindAuth, nil, "become: sudo needs a password for %s (kaudit never types one unasked): allow passwordless sudo for /bin/sh, give --ask-become-pass, or remove become", t.User)
	case bytes.Contains(out.Stderr, []byte("incorrect password attempt")) || bytes.Contains(out.Stderr, []byte("Sorry, try again")):
		return newErr(facts.KindAuth, nil, "become: sudo rejected the password given with --ask-become-pass for %s on this host", t.User)
	case out.ExitCode == exitFraming:
		return newErr(facts.KindProtocol, nil, "become: the standard input kaudit sent to sudo arrived incomplete (exit %d): is a login script reading stdin?", exitFraming)
	}
	return nil
}
