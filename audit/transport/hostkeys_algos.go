package transport

import (
	"slices"

	"golang.org/x/crypto/ssh"
)

// openSSHHostKeyOrder is OpenSSH's default HostKeyAlgorithms order (the
// part x/crypto implements): Ed25519 before ECDSA before RSA, certificates
// first. x/crypto's own default puts ECDSA first (golang/go#29286),
// so a host whose known_hosts line is Ed25519 would look changed.
var openSSHHostKeyOrder = []string{
	ssh.CertAlgoED25519v01,
	ssh.CertAlgoECDSA256v01, ssh.CertAlgoECDSA384v01, ssh.CertAlgoECDSA521v01,
	ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01,
	ssh.KeyAlgoED25519,
	ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
	ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA,
}

// certAlgos are the certificate algorithms of openSSHHostKeyOrder.
var certAlgos = openSSHHostKeyOrder[:6]

// Algorithms returns the HostKeyAlgorithms to offer when connecting to
// name and port (same meaning as for Callback) with these files: first the
// algorithms known_hosts can verify for that name (certificate algorithms
// when a @cert-authority line covers it, then the key types recorded), then
// the rest in OpenSSH's order, so a server that lost the recorded key type
// is reported as a changed key rather than "no common algorithm". An
// unknown host gets OpenSSH's order, so accept-new and kaudit trust record
// the key ssh itself would (Ed25519 first).
func (h *HostKeys) Algorithms(name string, port int, files KnownHostsFiles) []string {
	lname := LookupName(name, port)
	var first []string
	add := func(algs ...string) {
		for _, a := range algs {
			if !slices.Contains(first, a) {
				first = append(first, a)
			}
		}
	}
	for _, p := range files.all() {
		lines, err := h.file(p).lookup(lname)
		if err != nil {
			continue // the callback reports the file's error
		}
		for _, l := range lines {
			if l.marker == markerCA {
				add(certAlgos...)
			}
		}
		for _, l := range lines {
			if l.marker == "" {
				add(algorithmsFor(l.key.Type())...)
			}
		}
	}
	for _, a := range openSSHHostKeyOrder {
		add(a)
	}
	return first
}

// algorithmsFor maps a key type in known_hosts to the signature algorithms
// that prove it.
func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}
