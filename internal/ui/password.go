package ui

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/kaudit/kaudit/internal/termui"
)

// ErrNoTerminal is ReadPassword's error when no terminal is attached.
var ErrNoTerminal = errors.New("no terminal")

// ReadPassword reads one line from the terminal (/dev/tty, so that stdin
// may carry other input) with echo off, after writing prompt to w. The
// caller clears the returned bytes once it has used them. An empty line
// is an error.
func ReadPassword(w io.Writer, prompt string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !termui.IsTerminal(tty) {
		if tty != nil {
			tty.Close()
		}
		return nil, ErrNoTerminal
	}
	defer tty.Close()
	return readPassword(w, prompt, int(tty.Fd()))
}

func readPassword(w io.Writer, prompt string, fd int) ([]byte, error) {
	b, err := readSecret(fd, func() { fmt.Fprint(w, prompt) })
	fmt.Fprintln(w)
	if err != nil {
		return nil, fmt.Errorf("reading the password: %w", err)
	}
	if len(b) == 0 {
		return nil, errors.New("no password given")
	}
	return b, nil
}

// ReadPassphrase asks for a key passphrase on tty (prompt and answer on
// the terminal itself, so stdout and stderr may be files). Ctrl-C or
// Ctrl-D cancels. The caller clears the returned bytes once it has used
// them.
func ReadPassphrase(tty *os.File, prompt string) ([]byte, error) {
	b, err := readSecret(int(tty.Fd()), func() { fmt.Fprint(tty, prompt) })
	fmt.Fprint(tty, "\n")
	if err != nil {
		return nil, fmt.Errorf("passphrase: %w", err)
	}
	return b, nil
}

// TerminalPassphrase is a func that asks for a key passphrase on the
// controlling terminal (ReadPassphrase on /dev/tty), or nil when there
// is no terminal to ask on.
func TerminalPassphrase() func(prompt string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	if !termui.IsTerminal(tty) {
		tty.Close()
		return nil
	}
	return func(prompt string) ([]byte, error) { return ReadPassphrase(tty, prompt) }
}

// MaxSecret bounds a typed password or passphrase.
const MaxSecret = 1024

// readSecret reads one line from the terminal fd, with echo off before
// prompt is called (raw mode), so nothing typed early is ever shown.
// Ctrl-C or Ctrl-D cancels; the line's buffer is never reallocated and is
// wiped on every error; the terminal is restored in every case.
func readSecret(fd int, prompt func()) ([]byte, error) {
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, fmt.Errorf("cannot turn off the terminal's echo: %w", err)
	}
	defer func() { _ = term.Restore(fd, state) }()
	prompt()
	line := make([]byte, 0, MaxSecret) // never reallocated: no stray copy to wipe
	wipe := func() { clear(line[:cap(line)]) }
	buf := make([]byte, 1)
	for len(line) < MaxSecret {
		if n, err := unix.Read(fd, buf); err != nil || n == 0 {
			wipe()
			return nil, errors.New("nothing read from the terminal")
		}
		switch c := buf[0]; c {
		case '\r', '\n':
			return line, nil
		case 3, 4: // Ctrl-C, Ctrl-D
			wipe()
			return nil, errors.New("entry cancelled")
		case 0x7f, 8: // backspace
			if len(line) > 0 {
				line[len(line)-1] = 0
				line = line[:len(line)-1]
			}
		default:
			line = append(line, c)
		}
	}
	wipe()
	return nil, fmt.Errorf("longer than %d bytes", MaxSecret)
}
