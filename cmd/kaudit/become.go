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

// becomeOpts is --ask-become-pass, for every command that connects to hosts.
type becomeOpts struct{ ask bool }

func (o *becomeOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "ask-become-pass", Aliases: []string{"K"}, Destination: &o.ask,
		Usage: "ask once, on the terminal, for the sudo password of hosts with become: sudo; it is sent only to sudo's standard input (sudo -S), never on a command line, in logs or in reports"}}
}

// runner is the SSH transport for the command. With --ask-become-pass it
// first reads the become password from the terminal (prompt on stderr;
// /dev/tty, so that the inventory may come on stdin) and hands it to the
// runner.
func (o becomeOpts) runner(e env) (*transport.SSH, error) {
	runner := newRunner(e)
	if !o.ask {
		return runner, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !term.IsTerminal(int(tty.Fd())) {
		if tty != nil {
			tty.Close()
		}
		return nil, usageErr("--ask-become-pass needs a terminal to read the password from (none is attached); for automation allow passwordless sudo (NOPASSWD) for /bin/sh")
	}
	defer tty.Close()
	pw, err := readPassword(e.stderr, tty)
	if err != nil {
		return nil, usageErr("--ask-become-pass: %v", err)
	}
	runner.BecomePassword = pw
	return runner, nil
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
