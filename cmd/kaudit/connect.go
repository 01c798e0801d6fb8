package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/ui"
	"github.com/kaudit/kaudit/pipeline"
)

// sshConfigOpts is --ssh-config, for every command that connects.
type sshConfigOpts struct{ file string }

func (o *sshConfigOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "ssh-config", Destination: &o.file,
		Usage: "read OpenSSH client settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F); the inventory's own settings still win"}}
}

// becomeOpts is --ask-become-pass, for every command that connects to hosts.
type becomeOpts struct{ ask bool }

func (o *becomeOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "ask-become-pass", Aliases: []string{"K"}, Destination: &o.ask,
		Usage: "ask once, on the terminal, for the sudo password of hosts with become: sudo; it is sent only to sudo's standard input (sudo -S), never on a command line, in logs or in reports"}}
}

// password is the become password, read from the terminal with
// --ask-become-pass (ui.ReadPassword: prompt on stderr, /dev/tty so that
// the inventory may come on stdin), else nil.
func (o becomeOpts) password(e env) (*transport.BecomePassword, error) {
	if !o.ask {
		return nil, nil
	}
	b, err := ui.ReadPassword(e.stderr, "BECOME password: ")
	if errors.Is(err, ui.ErrNoTerminal) {
		return nil, usageErr("--ask-become-pass needs a terminal to read the password from (none is attached); for automation allow passwordless sudo (NOPASSWD) for /bin/sh")
	}
	var pw *transport.BecomePassword
	if err == nil {
		defer clear(b)
		pw, err = transport.NewBecomePassword(b)
	}
	if err != nil {
		return nil, usageErr("--ask-become-pass: %v", err)
	}
	return pw, nil
}

// connect is pipeline.Connect for hosts: the become password asked
// first, warnings on stderr, key passphrases asked on the terminal when
// there is one. Close it when the command is done.
func connect(e env, hosts []inventory.Host, sc sshConfigOpts, b becomeOpts) (*transport.SSH, error) {
	become, err := b.password(e)
	if err != nil {
		return nil, err
	}
	ssh, err := pipeline.Connect(hosts, pipeline.ConnectConfig{SSHConfig: sc.file, Become: become,
		Passphrase: ui.TerminalPassphrase(), Warn: e.warnLine})
	if err != nil {
		return nil, usage(err)
	}
	return ssh, nil
}

// fitOpenFiles lowers a fan-out of *n connections to what the open-file
// limit allows, and says so on stderr.
func (e env) fitOpenFiles(n *int) {
	fit, notice := audit.FitOpenFiles(*n)
	if notice != "" {
		e.warn("%s", notice)
	}
	*n = fit
}
