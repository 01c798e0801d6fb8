package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/termui"
	"github.com/kaudit/kaudit/internal/ui"
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
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil && termui.IsTerminal(tty) {
		ssh.Passphrase = func(prompt string) ([]byte, error) { return ui.ReadPassphrase(tty, prompt) }
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
