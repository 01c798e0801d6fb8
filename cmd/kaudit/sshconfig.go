package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
)

// sshConfigFlag is --ssh-config, shared by every command that connects.
func sshConfigFlag() cli.Flag {
	return &cli.StringFlag{Name: "ssh-config", Usage: "read OpenSSH client settings from `FILE` instead of ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F); the inventory's own settings still win"}
}

// newSSH builds the SSH runner for hosts: it loads ssh_config (unless no
// host uses it), prints warnings on stderr, and asks for key passphrases on
// the terminal when there is one.
func newSSH(c *cli.Context, hosts []inventory.Host) (*transport.SSH, error) {
	ssh := transport.NewSSH()
	warn := func(msg string) { fmt.Fprintf(c.App.ErrWriter, "kaudit: warning: %s\n", msg) }
	ssh.Warn = warn
	if anyUsesSSHConfig(hosts) || c.String("ssh-config") != "" {
		cfg, err := sshconfig.Load(sshconfig.Options{File: c.String("ssh-config"), Warn: warn})
		if err != nil {
			return nil, &exitError{code: ExitUsage, err: fmt.Errorf("%v (hint: fix the file, or set ssh_config: false in the inventory to ignore it)", err)}
		}
		ssh.Config = cfg
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil && term.IsTerminal(int(tty.Fd())) {
		ssh.Passphrase = func(prompt string) ([]byte, error) {
			fmt.Fprint(tty, prompt)
			defer fmt.Fprintln(tty)
			return term.ReadPassword(int(tty.Fd()))
		}
	} else if err == nil {
		tty.Close()
	}
	return ssh, nil
}

func anyUsesSSHConfig(hosts []inventory.Host) bool {
	for _, h := range hosts {
		if h.SSHConfig && h.Connection != inventory.ConnLocal {
			return true
		}
	}
	return false
}
