// Package transport runs one script on one host and returns its output.
//
// It owns SSH: each target and jump host is resolved (resolve.go: the
// inventory's settings, then ssh_config through audit/sshconfig, then
// kaudit's defaults); jump hosts are dialed once per scan and shared by
// every target behind them with a bound on handshakes in flight
// (bastion.go); ConnectTimeout bounds TCP, key exchange and authentication
// together and ServerAlive keepalives detect a dead peer (ssh.go); keys come
// from ssh-agent and identity files in OpenSSH's order, with IdentitiesOnly,
// user certificates and passphrases asked once before the fan-out (auth.go);
// host keys are verified against known_hosts (strict by default,
// accept-new and insecure as explicit opt-ins; an index over each file
// built once per run, hashed entries, @cert-authority and @revoked:
// knownhosts.go, hostkeys.go); `become: sudo` runs sudo -n, or sends the
// --ask-become-pass password to sudo's stdin (become.go); FetchHostKey stops
// a handshake at the host key, for kaudit trust; a local runner completes it. Every failure is classified into one of the report's
// error kinds (unreachable, auth, hostkey, timeout, protocol) with a message
// that says what to do.
package transport
