package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
)

// sshConfigOpts is --ssh-config, for every command that connects.
type sshConfigOpts struct{ file string }

func (o *sshConfigOpts) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "ssh-config", Destination: &o.file,
		Usage: "read OpenSSH client settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F); the inventory's own settings still win"}}
}

// connect builds the SSH runner for hosts: ssh_config loaded (unless no
// host uses it), warnings on stderr, key passphrases asked on the terminal
// when there is one, and with --ask-become-pass the sudo password. Close
// it when the command is done (it holds the bastion connections).
func connect(e env, hosts []inventory.Host, sc sshConfigOpts, b becomeOpts) (*transport.SSH, error) {
	ssh, err := b.runner(e)
	if err != nil {
		return nil, err
	}
	if anyUsesSSHConfig(hosts) || sc.file != "" {
		cfg, err := sshconfig.Load(sshconfig.Options{File: sc.file, Warn: ssh.Warn})
		if err != nil {
			return nil, usageErr("%v (hint: fix the file, or set ssh_config: false in the inventory to ignore it)", err)
		}
		ssh.Config = cfg
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil && term.IsTerminal(int(tty.Fd())) {
		ssh.Passphrase = func(prompt string) ([]byte, error) { return readSecret(tty, prompt) }
	} else if err == nil {
		tty.Close()
	}
	return ssh, nil
}

// maxSecret bounds a typed passphrase.
const maxSecret = 1024

// readSecret shows prompt on the terminal and reads one line without echo.
// Echo is off before the prompt appears (raw mode), so nothing typed early
// is ever shown; Ctrl-C or Ctrl-D cancels, and the terminal is restored in
// every case.
func readSecret(tty *os.File, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return nil, err
	}
	defer func() { _ = term.Restore(fd, state) }()
	fmt.Fprint(tty, prompt)
	defer fmt.Fprint(tty, "\r\n")
	line := make([]byte, 0, maxSecret) // never reallocated: no stray copy to wipe
	wipe := func() {
		for i := range line {
			line[i] = 0
		}
	}
	buf := make([]byte, 1)
	for len(line) < maxSecret {
		if n, err := tty.Read(buf); err != nil || n == 0 {
			wipe()
			return nil, errors.New("no passphrase read")
		}
		switch c := buf[0]; c {
		case '\r', '\n':
			return line, nil
		case 3, 4: // Ctrl-C, Ctrl-D
			wipe()
			return nil, errors.New("passphrase entry cancelled")
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
	return nil, fmt.Errorf("passphrase longer than %d bytes", maxSecret)
}

func anyUsesSSHConfig(hosts []inventory.Host) bool {
	for _, h := range hosts {
		if h.SSHConfig && h.Connection != inventory.ConnLocal {
			return true
		}
	}
	return false
}
