package pipeline

import (
	"errors"
	"fmt"
	"io"

	gossh "golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/internal/fanout"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/ui"
)

// ConnectConfig is what Connect needs besides the hosts. Every field may
// be left zero.
type ConnectConfig struct {
	// SSHConfig is an OpenSSH client configuration file read instead of
	// ~/.ssh/config and /etc/ssh/ssh_config (like ssh -F).
	SSHConfig string
	// Become is the sudo password for hosts with become: sudo (sent only
	// to sudo -S); nil: passwordless sudo -n.
	Become *transport.BecomePassword
	// AskBecome (--ask-become-pass) has Connect read Become on the
	// terminal first (askBecomePassword, the prompt written to Prompt).
	AskBecome bool
	Prompt    io.Writer
	// Passphrase asks for an encrypted key's passphrase; nil: such keys
	// are not used.
	Passphrase func(prompt string) ([]byte, error)
	// Warn receives the transport's and ssh_config's warnings.
	Warn func(string)
}

// newRunner is the SSH runner for hosts, the one the CLI's scan, fix,
// rollback and trust connect with: ssh_config loaded (unless no host uses
// it and no file is given), warnings, passphrases and the become password
// as c says. Close it when done (it holds the bastion connections). A bad
// ssh_config is an error that says how to fix or ignore it.
func newRunner(hosts []inventory.Host, c ConnectConfig) (*transport.SSH, error) {
	if c.AskBecome {
		pw, err := askBecomePassword(c.Prompt)
		if err != nil {
			return nil, err
		}
		c.Become = pw
	}
	ssh := transport.NewSSH()
	ssh.Warn, ssh.BecomePassword, ssh.Passphrase = c.Warn, c.Become, c.Passphrase
	ssh.HostKeys.Recorded = recordedKey(c.Warn)
	if usesSSHConfig(hosts) || c.SSHConfig != "" {
		cfg, err := sshconfig.Load(sshconfig.Options{File: c.SSHConfig, Warn: ssh.Warn})
		if err != nil {
			return nil, located.Hint(err, "fix the file, or set ssh_config: false in the inventory to ignore it")
		}
		ssh.Config = cfg
	}
	return ssh, nil
}

// recordedKey says on warn each host key accept-new recorded, as
// OpenSSH does: a key is never trusted silently.
func recordedKey(warn func(string)) func(string, gossh.PublicKey, string) {
	return func(name string, key gossh.PublicKey, file string) {
		if warn != nil {
			warn(fmt.Sprintf("permanently added the host key of %s (%s %s) to %s: accept-new (ssh_config StrictHostKeyChecking accept-new or no, or host_key_policy: accept-new) trusts a host's first key unseen; verify the fingerprint out of band",
				name, key.Type(), gossh.FingerprintSHA256(key), file))
		}
	}
}

func usesSSHConfig(hosts []inventory.Host) bool {
	for _, h := range hosts {
		if h.SSHConfig && h.Connection != inventory.ConnLocal {
			return true
		}
	}
	return false
}

// askBecomePassword reads the become password on the terminal
// (ui.ReadPassword: the prompt on stderr, /dev/tty, so that the inventory
// may come on stdin) for --ask-become-pass. Without a terminal it is an
// error that says what to do instead.
func askBecomePassword(stderr io.Writer) (*transport.BecomePassword, error) {
	b, err := ui.ReadPassword(stderr, "BECOME password: ")
	if errors.Is(err, ui.ErrNoTerminal) {
		return nil, errors.New("--ask-become-pass needs a terminal to read the password from (none is attached); for automation allow passwordless sudo (NOPASSWD) for /bin/sh")
	}
	var pw *transport.BecomePassword
	if err == nil {
		defer clear(b)
		pw, err = transport.NewBecomePassword(b)
	}
	if err != nil {
		return nil, fmt.Errorf("--ask-become-pass: %v", err)
	}
	return pw, nil
}

// fitWarned is a fan-out of n connections lowered to what the open-file
// limit allows (fanout.FitOpenFiles), with a warning on c when it was
// lowered.
func fitWarned(c Console, n int) int {
	fit, notice := fanout.FitOpenFiles(n)
	if notice != "" {
		c.Warn(notice)
	}
	return fit
}
