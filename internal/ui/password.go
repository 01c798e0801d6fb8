package ui

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// ErrNoTerminal is ReadPassword's error when no terminal is attached.
var ErrNoTerminal = errors.New("no terminal")

// ReadPassword reads one line from the terminal (/dev/tty, so that stdin
// may carry other input) with echo off, after writing prompt to w. The
// caller clears the returned bytes once it has used them. An empty line
// is an error.
func ReadPassword(w io.Writer, prompt string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		if tty != nil {
			tty.Close()
		}
		return nil, ErrNoTerminal
	}
	defer tty.Close()
	return readPassword(w, prompt, int(tty.Fd()))
}

func readPassword(w io.Writer, prompt string, fd int) ([]byte, error) {
	// Echo goes off before the prompt appears: a password typed (or pasted)
	// the instant the prompt shows must not be echoed either.
	restore, err := noEcho(fd)
	if err != nil {
		return nil, fmt.Errorf("cannot turn off the terminal's echo: %w", err)
	}
	defer restore()
	fmt.Fprint(w, prompt)
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(w)
	if err != nil {
		return nil, fmt.Errorf("reading the password: %w", err)
	}
	if len(b) == 0 {
		return nil, errors.New("no password given")
	}
	return b, nil
}

// noEcho turns the terminal's echo off and returns what turns it back on.
func noEcho(fd int) (func(), error) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	t.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
