// Package sshconfig evaluates OpenSSH client configuration files the way
// ssh(1) does, so kaudit connects wherever `ssh HOST` connects.
//
// It is a small evaluator of OpenSSH's readconf semantics rather than a
// general parser: for one host it walks the user's file (~/.ssh/config of
// the passwd home, or the file given with --ssh-config, like ssh -F) and
// then /etc/ssh/ssh_config, keeping the first value obtained for each
// keyword (IdentityFile and CertificateFile accumulate). Host patterns with
// negation, Include (globs, ~, relative to ~/.ssh or /etc/ssh), Match
// (all, canonical, final, host, originalhost, user, localuser) and the
// second "final" pass that a `Match final` triggers all follow OpenSSH 9.
// A Match criterion kaudit cannot evaluate (exec, localnetwork, tagged, …)
// makes its block not apply and yields one warning; it never changes which
// block the following lines belong to.
//
// Tokens (%h %p %r %u %n %d %C %L %l %i %k %j %%), ~ and ${ENV} are expanded
// in the keywords where OpenSSH expands them (see expand.go). The package
// reads files only: it never runs a command (ProxyCommand and Match exec are
// reported, not executed).
package sshconfig
