// Package transport runs one script on one host and returns its output.
//
// It owns SSH: dialing with bounded connect and handshake timeouts, host-key
// verification against known_hosts (strict by default, accept-new and
// insecure as explicit opt-ins), authentication through ssh-agent and
// identity files, ProxyJump, and `become: sudo`. A local runner executes the
// same script on the machine kaudit runs on. Every failure is classified into
// one of the report's error kinds (unreachable, auth, hostkey, timeout,
// protocol) with a message that says what to do.
package transport
