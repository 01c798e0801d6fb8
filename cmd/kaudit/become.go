package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/kaudit/kaudit/audit/transport"
)

// becomeFlag is --ask-become-pass, for every command that connects to hosts.
func becomeFlag() cli.Flag {
	return &cli.BoolFlag{Name: "ask-become-pass", Aliases: []string{"K"},
		Usage: "ask once, on the terminal, for the sudo password of hosts with become: sudo; it is sent only to sudo's standard input (sudo -S), never on a command line, in logs or in reports"}
}

// askBecomePass reads the become password from the terminal when
// --ask-become-pass is given and hands it to the SSH runner. The prompt
// goes to stderr; /dev/tty is used so that the inventory may come on stdin.
func askBecomePass(c *cli.Context, runner *transport.SSH) error {
	if !c.Bool("ask-become-pass") {
		return nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		if tty != nil {
			tty.Close()
		}
		return usageErr("--ask-become-pass needs a terminal to read the password from (none is attached); for automation allow passwordless sudo (NOPASSWD) for /bin/sh")
	}
	defer tty.Close()
	pw, err := readPassword(c.App.ErrWriter, tty)
	if err != nil {
		return usageErr("--ask-become-pass: %v", err)
	}
	runner.BecomePassword = pw
	return nil
}

func readPassword(prompt io.Writer, tty *os.File) (*transport.BecomePassword, error) {
	// Echo goes off before the prompt appears: a password typed (or pasted)
	// the instant the prompt shows must not be echoed either.
	restore, err := noEcho(int(tty.Fd()))
	if err != nil {
		return nil, fmt.Errorf("cannot turn off the terminal's echo: %w", err)
	}
	defer restore()
	fmt.Fprint(prompt, "BECOME password: ")
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(prompt)
	if err != nil {
		return nil, fmt.Errorf("reading the password: %w", err)
	}
	defer clear(b)
	if len(b) == 0 {
		return nil, errors.New("no password given")
	}
	return transport.NewBecomePassword(b)
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
