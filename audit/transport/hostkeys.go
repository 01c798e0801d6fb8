package transport

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/located"
)

// Host-key policies.
const (
	PolicyStrict    = "strict"     // the key must be in known_hosts
	PolicyAcceptNew = "accept-new" // unknown hosts are added; changed keys still fail
	PolicyInsecure  = "insecure"   // no verification (explicit opt-in only)
)

// KnownHostsFiles are the known_hosts files of one host or hop, as
// ssh_config's UserKnownHostsFile and GlobalKnownHostsFile name them. Both
// are read; accept-new and kaudit trust write to User[0] only.
type KnownHostsFiles struct {
	User   []string
	Global []string
	Hash   bool // HashKnownHosts: names are written as |1|salt|hash
}

func (f KnownHostsFiles) all() []string { return append(append([]string{}, f.User...), f.Global...) }

// HostKeys verifies host keys against known_hosts files. Each file is read
// and indexed once per scan and shared by every host and hop that names it
// (knownhosts.go); accept-new additions go through a locked append
// (knownhosts_append.go). Safe for concurrent use.
type HostKeys struct {
	mu      sync.Mutex
	files   map[string]*knownFile
	pinned  map[string]string       // lookup name -> key blob the callbacks trust for this run only (kaudit trust's bastions); Check ignores it
	capture map[string]*capturedKey // lookup names whose handshake stops at the host key (kaudit trust)
	// Recorded, when set, is told of each key accept-new wrote to a
	// known_hosts file (never silently: the caller says it on stderr, as
	// OpenSSH's "Permanently added" does). Called from the handshakes'
	// goroutines.
	Recorded func(name string, key ssh.PublicKey, file string)
}

// NewHostKeys returns a verifier that has read nothing yet.
func NewHostKeys() *HostKeys {
	return &HostKeys{files: map[string]*knownFile{}, pinned: map[string]string{}, capture: map[string]*capturedKey{}}
}

func (h *HostKeys) file(path string) *knownFile {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.files[path]
	if !ok {
		f = readKnownFile(path)
		h.files[path] = f
	}
	return f
}

// KeyStatus is the verdict on one offered host key.
type KeyStatus int

// Verdicts of Check.
const (
	KeyKnown     KeyStatus = iota // a known_hosts line for the name holds this key
	KeyCertified                  // a host certificate signed by a @cert-authority for the name, valid now
	KeyUnknown                    // no line for the name
	KeyChanged                    // lines for the name hold other keys
	KeyRevoked                    // the key (or its certificate's CA) is @revoked
	KeyBadCert                    // a certificate from a known CA that is not valid (principal, dates, type)
	KeyFileError                  // a known_hosts file cannot be read or has a malformed line
)

// Verdict is what Check found.
type Verdict struct {
	Status KeyStatus
	Name   string   // the lookup name, e.g. "broker-1" or "[10.0.0.5]:2222"
	Where  []string // FILE:LINE of the lines holding other keys (KeyChanged) or the @revoked line
	Err    error    // KeyBadCert, KeyFileError
}

// Check verifies key for name (the HostKeyAlias or the host as dialled) and
// port (0 for an alias) against files, as OpenSSH does: @revoked first; a
// certificate from a @cert-authority for the name; then the plain lines.
func (h *HostKeys) Check(name string, port int, files KnownHostsFiles, key ssh.PublicKey) Verdict {
	v := Verdict{Name: LookupName(name, port)}
	var lines []*knownLine
	for _, p := range files.all() {
		f := h.file(p)
		ls, err := f.lookup(v.Name)
		if err != nil {
			return Verdict{Status: KeyFileError, Name: v.Name, Err: err}
		}
		for _, k := range revocationKeys(key) {
			if r := f.isRevoked(k); r != nil {
				return Verdict{Status: KeyRevoked, Name: v.Name, Where: []string{r.where()}}
			}
		}
		lines = append(lines, ls...)
	}
	if cert, ok := key.(*ssh.Certificate); ok {
		if cv, done := checkCert(v.Name, strings.Trim(strings.ToLower(name), "[]"), cert, lines); done {
			return cv
		}
		key = cert.Key // no CA of ours signed it: judge the plain key, as OpenSSH does
	}
	blob := string(key.Marshal())
	for _, l := range lines {
		if l.marker == "" && l.blob == blob {
			v.Status = KeyKnown
			return v
		}
	}
	for _, l := range lines {
		if l.marker == "" {
			v.Where = append(v.Where, l.where())
		}
	}
	v.Status = KeyUnknown
	if len(v.Where) > 0 {
		v.Status = KeyChanged
	}
	return v
}

func (l *knownLine) where() string { return fmt.Sprintf("%s:%d", l.file, l.line) }

func revocationKeys(key ssh.PublicKey) []ssh.PublicKey {
	if c, ok := key.(*ssh.Certificate); ok {
		return []ssh.PublicKey{c, c.Key, c.SignatureKey}
	}
	return []ssh.PublicKey{key}
}

// checkCert judges a host certificate against the @cert-authority lines.
// done is false when no such line names the certificate's signer.
func checkCert(lookup, principal string, cert *ssh.Certificate, lines []*knownLine) (Verdict, bool) {
	ca := string(cert.SignatureKey.Marshal())
	for _, l := range lines {
		if l.marker != markerCA || l.blob != ca {
			continue
		}
		v := Verdict{Name: lookup, Status: KeyCertified}
		checker := ssh.CertChecker{Clock: time.Now}
		switch {
		case cert.CertType != ssh.HostCert:
			v.Status, v.Err = KeyBadCert, errors.New("the certificate is a user certificate, not a host certificate")
		case len(cert.ValidPrincipals) == 0:
			v.Status, v.Err = KeyBadCert, errors.New("the certificate names no host (no principals)")
		default:
			if err := checker.CheckCert(principal, cert); err != nil {
				v.Status, v.Err = KeyBadCert, errors.New(strings.TrimPrefix(err.Error(), "ssh: "))
			}
		}
		return v, true
	}
	return Verdict{}, false
}

// Callback returns the ssh.HostKeyCallback for one host or hop.
//
//	name:   the name the key is recorded under: the HostKeyAlias when one is
//	        set, else the host as dialled (HostName / inventory address, or
//	        the hop's own name for a ProxyJump hop);
//	port:   the port dialled; pass 0 with a HostKeyAlias (OpenSSH records an
//	        alias without a port), 22 and 0 both give the bare name;
//	files:  the user and global known_hosts files of that host or hop;
//	policy: PolicyStrict, PolicyAcceptNew or PolicyInsecure.
//
// The hostname x/crypto passes to the callback is ignored: name and port
// decide. Every error is a *Error of facts.KindHostKey.
func (h *HostKeys) Callback(name string, port int, files KnownHostsFiles, policy string) ssh.HostKeyCallback {
	return func(_ string, _ net.Addr, key ssh.PublicKey) error {
		lname := LookupName(name, port)
		if h.captured(lname, key) {
			return errCaptured
		}
		if policy == PolicyInsecure {
			return nil // explicit, inventory-level opt-in only
		}
		if h.isPinned(lname, key) {
			return nil
		}
		v := h.Check(name, port, files, key)
		if v.Status == KeyUnknown && policy == PolicyAcceptNew {
			return h.acceptNew(v.Name, files, plainKey(key))
		}
		return v.asError(key, files)
	}
}

func plainKey(k ssh.PublicKey) ssh.PublicKey {
	if c, ok := k.(*ssh.Certificate); ok {
		return c.Key
	}
	return k
}

// asError turns a verdict into the error the handshake fails with (nil
// when the key is trusted).
func (v Verdict) asError(key ssh.PublicKey, files KnownHostsFiles) error {
	fp := ssh.FingerprintSHA256(plainKey(key))
	switch v.Status {
	case KeyKnown, KeyCertified:
		return nil
	case KeyRevoked:
		return newErr(facts.KindHostKey, nil, "host key %s %s of %s is marked @revoked in known_hosts (%s): do not connect; ask who revoked it", key.Type(), fp, v.Name, strings.Join(v.Where, ", "))
	case KeyBadCert:
		return newErr(facts.KindHostKey, v.Err, "%s", located.WithHint(fmt.Sprintf("host certificate of %s (%s) is not valid: %v", v.Name, fp, v.Err), "renew it (ssh-keygen -s CA -h -n NAME) or check the clock"))
	case KeyFileError:
		return newErr(facts.KindHostKey, v.Err, "%v", v.Err)
	case KeyChanged:
		return newErr(facts.KindHostKey, nil, "%s", located.WithHint(
			fmt.Sprintf("HOST KEY CHANGED for %s: server offered %s %s, known_hosts has a different key at %s", v.Name, key.Type(), fp, strings.Join(v.Where, ", ")),
			"if the host was rebuilt, remove that line (ssh-keygen -R "+ShellName(v.Name)+") and verify the new fingerprint out of band"))
	}
	return newErr(facts.KindHostKey, nil,
		"unknown host key for %s: %s %s is not in %s; verify the fingerprint, then record it (kaudit trust INVENTORY) or set host_key_policy: accept-new",
		v.Name, key.Type(), fp, strings.Join(files.all(), ", "))
}

// acceptNew records an unknown host's key in the first user file.
func (h *HostKeys) acceptNew(name string, files KnownHostsFiles, key ssh.PublicKey) error {
	if len(files.User) == 0 {
		return newErr(facts.KindHostKey, nil, "%s", located.WithHint("accept-new needs a user known_hosts file to write to", "set known_hosts"))
	}
	res, have, err := h.file(files.User[0]).record(name, key, files.Hash)
	switch {
	case err != nil:
		return newErr(facts.KindHostKey, err, "accept-new: cannot record the host key of %s in %s: %v", name, files.User[0], err)
	case res == conflicts:
		var where []string
		for _, l := range have {
			where = append(where, l.where())
		}
		return Verdict{Status: KeyChanged, Name: name, Where: where}.asError(key, files)
	case res == appended && h.Recorded != nil:
		h.Recorded(name, key, files.User[0])
	}
	return nil
}

// Record writes key for name and port into files.User[0] (kaudit trust),
// with the same locking as accept-new. It never replaces a line: when a
// different key is recorded meanwhile it returns a KeyChanged verdict and
// writes nothing; KeyKnown means the key was there or is now.
func (h *HostKeys) Record(name string, port int, files KnownHostsFiles, key ssh.PublicKey) (Verdict, error) {
	lname := LookupName(name, port)
	if len(files.User) == 0 {
		return Verdict{}, fmt.Errorf("no user known_hosts file to write %s to", lname)
	}
	res, have, err := h.file(files.User[0]).record(lname, plainKey(key), files.Hash)
	if err != nil {
		return Verdict{}, fmt.Errorf("record %s in %s: %w", lname, files.User[0], err)
	}
	v := Verdict{Status: KeyKnown, Name: lname}
	if res == conflicts {
		v.Status = KeyChanged
		for _, l := range have {
			v.Where = append(v.Where, l.where())
		}
	}
	return v, nil
}

// ShellName quotes a known_hosts name for a command line shown to the user:
// "[host]:port" would be a glob pattern to the shell.
func ShellName(name string) string {
	if strings.ContainsAny(name, "[]*?") {
		return "'" + name + "'"
	}
	return name
}
