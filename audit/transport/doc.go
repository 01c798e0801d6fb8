// Package transport runs one script on one host and returns its output.
//
// It owns SSH: dialing with bounded connect and handshake timeouts, host-key
// verification against known_hosts (strict by default, accept-new and
// insecure as explicit opt-ins; an index over each file built once per run,
// hashed entries, @cert-authority and @revoked: knownhosts.go, hostkeys.go),
// authentication through ssh-agent and identity files, ProxyJump, and
// `become: sudo` (sudo -n, or the --ask-become-pass password on sudo's
// stdin: become.go). FetchHostKey stops a handshake at the host key, for
// kaudit trust. A local runner executes the
// same script on the machine kaudit runs on. Every failure is classified into
// one of the report's error kinds (unreachable, auth, hostkey, timeout,
// protocol) with a message that says what to do.
package transport
