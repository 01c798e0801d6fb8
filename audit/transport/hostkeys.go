package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host-key policies.
const (
	PolicyStrict    = "strict"     // the key must be in known_hosts
	PolicyAcceptNew = "accept-new" // unknown hosts are added; changed keys still fail
	PolicyInsecure  = "insecure"   // no verification (explicit opt-in only)
)

// HostKeys verifies host keys against known_hosts files. Files are read once
// per distinct file list and shared by every host of the scan.
type HostKeys struct {
	mu    sync.Mutex
	dbs   map[string]*knownDB
	added map[string]ssh.PublicKey // accept-new additions this run: normalized address -> key
}

type knownDB struct {
	files []string
	cb    ssh.HostKeyCallback // nil when no file exists yet
	err   error
}

// NewHostKeys returns an empty verifier.
func NewHostKeys() *HostKeys {
	return &HostKeys{dbs: map[string]*knownDB{}, added: map[string]ssh.PublicKey{}}
}

func (h *HostKeys) db(files []string) *knownDB {
	key := strings.Join(files, "\x00")
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := h.dbs[key]; ok {
		return d
	}
	d := &knownDB{files: files}
	var existing []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			d.err = fmt.Errorf("known_hosts %s: %w", f, err)
		}
	}
	if len(existing) > 0 && d.err == nil {
		d.cb, d.err = knownhosts.New(existing...)
		if d.err != nil {
			d.err = fmt.Errorf("known_hosts: %w (fix or remove the bad line)", d.err)
		}
	}
	h.dbs[key] = d
	return d
}

// Algorithms returns the host-key algorithms known for addr (host:port), so
// the client asks the server for a key type that known_hosts can verify.
// Nil means "no preference" (unknown host).
func (h *HostKeys) Algorithms(files []string, addr string) []string {
	d := h.db(files)
	if d.cb == nil {
		return nil
	}
	// The knownhosts callback reports the keys it knows in a KeyError when
	// shown a key it does not: use a throw-away key to list them.
	err := d.cb(addr, dummyAddr(addr), probeKey)
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var algs []string
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			algs = append(algs, a)
		}
	}
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return algs
}

// Callback returns the ssh.HostKeyCallback for one host.
func (h *HostKeys) Callback(files []string, policy string) ssh.HostKeyCallback {
	if policy == PolicyInsecure {
		return ssh.InsecureIgnoreHostKey() // explicit, inventory-level opt-in only
	}
	d := h.db(files)
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		if d.err != nil {
			return newErr(KindHostKey, d.err, "%v", d.err)
		}
		fp := ssh.FingerprintSHA256(key)
		var err error
		if d.cb != nil {
			err = d.cb(hostname, remote, key)
			if err == nil {
				return nil
			}
		}
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case errors.As(err, &re):
			return newErr(KindHostKey, err, "host key %s %s is marked @revoked in known_hosts", key.Type(), fp)
		case errors.As(err, &ke) && len(ke.Want) > 0:
			var where []string
			for _, w := range ke.Want {
				where = append(where, fmt.Sprintf("%s:%d", w.Filename, w.Line))
			}
			return newErr(KindHostKey, err,
				"HOST KEY CHANGED for %s: server offered %s %s, known_hosts has a different key at %s; if the host was rebuilt, remove that line (ssh-keygen -R %s) and verify the new fingerprint out of band",
				hostname, key.Type(), fp, strings.Join(where, ", "), knownhosts.Normalize(hostname))
		case err != nil && !errors.As(err, &ke):
			return newErr(KindHostKey, err, "host key check: %v", err)
		}
		// Unknown host.
		norm := knownhosts.Normalize(hostname)
		h.mu.Lock()
		defer h.mu.Unlock()
		if prev, ok := h.added[norm]; ok {
			if string(prev.Marshal()) == string(key.Marshal()) {
				return nil
			}
			return newErr(KindHostKey, nil, "HOST KEY CHANGED for %s during this run: now %s %s", hostname, key.Type(), fp)
		}
		if policy != PolicyAcceptNew {
			return newErr(KindHostKey, nil,
				"unknown host key for %s: %s %s is not in %s; verify the fingerprint, then add it (ssh-keyscan -p PORT HOST >> known_hosts) or set host_key_policy: accept-new",
				hostname, key.Type(), fp, strings.Join(files, ", "))
		}
		if len(files) == 0 {
			return newErr(KindHostKey, nil, "accept-new needs a known_hosts file to write to")
		}
		if err := appendKnownHost(files[0], norm, key); err != nil {
			return newErr(KindHostKey, err, "accept-new: cannot record host key in %s: %v", files[0], err)
		}
		h.added[norm] = key
		return nil
	}
}

func appendKnownHost(path, addr string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, knownhosts.Line([]string{addr}, key)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func dummyAddr(hostport string) net.Addr {
	host, _, _ := net.SplitHostPort(hostport)
	ip := net.ParseIP(host)
	if ip == nil {
		ip = net.IPv4(0, 0, 0, 0)
	}
	return &net.TCPAddr{IP: ip, Port: 22}
}

// probeKey is a fixed public key no real host has (an ed25519 key of 32 zero
// bytes), used only to list the known key types for a host.
var probeKey = func() ssh.PublicKey {
	blob := append([]byte{0, 0, 0, 11}, []byte("ssh-ed25519")...)
	blob = append(blob, 0, 0, 0, 32)
	blob = append(blob, make([]byte, 32)...)
	k, err := ssh.ParsePublicKey(blob)
	if err != nil {
		panic(err)
	}
	return k
}()
