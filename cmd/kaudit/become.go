package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/ui"
)

// becomeOpts is --ask-become-pass, for every command that connects to hosts.
type becomeOpts struct{ ask bool }

func (o *becomeOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "ask-become-pass", Aliases: []string{"K"}, Destination: &o.ask,
		Usage: "ask once, on the terminal, for the sudo password of hosts with become: sudo; it is sent only to sudo's standard input (sudo -S), never on a command line, in logs or in reports"}}
}

// runner is the SSH transport for the command. With --ask-become-pass it
// first reads the become password from the terminal (ui.ReadPassword:
// prompt on stderr, /dev/tty so that the inventory may come on stdin) and
// hands it to the runner.
func (o becomeOpts) runner(e env) (*transport.SSH, error) {
	runner := newRunner(e)
	if !o.ask {
		return runner, nil
	}
	b, err := ui.ReadPassword(e.stderr, "BECOME password: ")
	if errors.Is(err, ui.ErrNoTerminal) {
		return nil, usageErr("--ask-become-pass needs a terminal to read the password from (none is attached); for automation allow passwordless sudo (NOPASSWD) for /bin/sh")
	}
	if err == nil {
		defer clear(b)
		runner.BecomePassword, err = transport.NewBecomePassword(b)
	}
	if err != nil {
		return nil, usageErr("--ask-become-pass: %v", err)
	}
	return runner, nil
}
