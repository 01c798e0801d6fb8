package transport

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
)

// knownFile is one known_hosts file, parsed once and indexed: plain host
// names go to a map, so a lookup among 10,000 hosts costs one map access
// (knownhosts.New scans every line on every check: golang.org/x/crypto/ssh/knownhosts, hostKeyDB.checkAddr). Lines with
// wildcards or negations, and hashed lines (|1|salt|hash, whose name cannot
// be known without trying each salt), are matched one by one; hashed lines
// keep their HMAC state precomputed so that each try costs two SHA-1 blocks.
//
// A file is shared by every host and hop whose settings name it, and grows
// when accept-new or kaudit trust appends to it (knownhosts_append.go).
type knownFile struct {
	path  string
	mu    sync.RWMutex
	ix    *knownIndex // replaced whole when the file shrank under us
	cache sync.Map    // lookup name -> []*knownLine; cleared when the file grows
}

// knownIndex is the parsed content of a known_hosts file.
type knownIndex struct {
	exact     map[string][]*knownLine // lower-case "host" or "[host]:port" -> lines naming it plainly
	patterned []*knownLine            // lines with a wildcard or a negated pattern
	hashed    []*knownLine            // lines with a hashed host
	revoked   map[string]*knownLine   // @revoked, by key blob (whatever the host pattern, as x/crypto does)
	size      int64                   // bytes indexed so far; an append reads only what follows
	lines     int                     // lines indexed so far (numbering of the next ones)
	skipped   int                     // lines with a key type x/crypto cannot parse (ignored, as OpenSSH does)
	err       error                   // a malformed line: every check against this file fails with it
}

func newKnownIndex() *knownIndex {
	return &knownIndex{exact: map[string][]*knownLine{}, revoked: map[string]*knownLine{}}
}

const markerCA = "@cert-authority"

// knownLine is one entry of a known_hosts file.
type knownLine struct {
	marker   string   // "" or markerCA (revoked lines live in knownIndex.revoked)
	patterns []string // lower-case host patterns, "!" kept; nil for a purely hashed line
	hashes   []hashedHost
	key      ssh.PublicKey
	blob     string // key.Marshal(), for comparisons
	file     string
	line     int
}

// hashedHost is one |1|salt|hash pattern with the HMAC-SHA1 key schedule
// done: the SHA-1 states after the inner and outer pads.
type hashedHost struct {
	inner, outer []byte // marshalled sha1 states
	sum          []byte
}

// readKnownFile parses p. A file that does not exist is an empty file
// that accept-new may create; one that cannot be read fails every check.
func readKnownFile(p string) *knownFile {
	f := &knownFile{path: p, ix: newKnownIndex()}
	data, err := readShared(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		f.ix.err = fmt.Errorf("known_hosts %s: %w", p, err)
	default:
		f.ix.add(p, data)
	}
	return f
}

// readShared reads p under a shared flock, so that it never sees half of a
// line that record (holding the exclusive lock) is appending: one write(2)
// that crosses a page boundary is visible to an unlocked reader in two
// steps. Where flock is not supported the file is read without it.
func readShared(p string) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_SH); err == nil {
		defer syscall.Flock(int(fh.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	}
	return io.ReadAll(fh)
}

// add indexes data, which follows what is indexed already.
func (ix *knownIndex) add(file string, data []byte) {
	ix.size += int64(len(data))
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		ix.lines++
		if err := ix.addLine(file, line, ix.lines); err != nil && ix.err == nil {
			ix.err = fmt.Errorf("known_hosts %s:%d: %v (fix or delete that line; ssh-keygen -F HOST -f %s lists a host's lines)", file, ix.lines, err, file)
		}
	}
}

func (ix *knownIndex) addLine(file string, raw []byte, n int) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] == '#' {
		return nil
	}
	marker, hosts, key, _, _, err := ssh.ParseKnownHosts(append(t, '\n'))
	if err != nil {
		if strings.Contains(err.Error(), "unknown key algorithm") {
			ix.skipped++ // a key type this client cannot use cannot match either
			return nil
		}
		return errors.New(strings.TrimPrefix(err.Error(), "ssh: "))
	}
	l := &knownLine{key: key, blob: string(key.Marshal()), file: file, line: n}
	switch marker {
	case "revoked":
		ix.revoked[l.blob] = l
		return nil
	case "cert-authority":
		l.marker = markerCA
	case "":
	default:
		return fmt.Errorf("unknown marker @%s", marker)
	}
	plain := true
	for _, h := range hosts {
		if strings.HasPrefix(h, "|") {
			hh, err := parseHashed(h)
			if err != nil {
				return err
			}
			l.hashes = append(l.hashes, hh)
			continue
		}
		h = strings.ToLower(h)
		l.patterns = append(l.patterns, h)
		plain = plain && !strings.ContainsAny(h, "*?!")
	}
	ix.insert(l, plain)
	return nil
}

func (ix *knownIndex) insert(l *knownLine, plain bool) {
	switch {
	case len(l.hashes) > 0:
		ix.hashed = append(ix.hashed, l)
	case !plain:
		ix.patterned = append(ix.patterned, l)
	default:
		for _, h := range l.patterns {
			ix.exact[h] = append(ix.exact[h], l)
		}
	}
}

// parseHashed decodes "|1|base64(salt)|base64(hmac-sha1(salt, host))".
func parseHashed(s string) (hashedHost, error) {
	parts := strings.Split(s, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		return hashedHost{}, fmt.Errorf("bad hashed host %q (want |1|salt|hash)", s)
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	sum, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(sum) != sha1.Size {
		return hashedHost{}, fmt.Errorf("bad hashed host %q (base64 salt and 20-byte hash expected)", s)
	}
	return hashedHost{inner: padState(salt, 0x36), outer: padState(salt, 0x5c), sum: sum}, nil
}

// padState is the SHA-1 state after hashing the HMAC key XOR pad (RFC 2104).
func padState(key []byte, pad byte) []byte {
	if len(key) > sha1.BlockSize {
		s := sha1.Sum(key)
		key = s[:]
	}
	block := make([]byte, sha1.BlockSize)
	copy(block, key)
	for i := range block {
		block[i] ^= pad
	}
	d := sha1.New()
	d.Write(block)
	st, err := d.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		panic(err) // crypto/sha1 always marshals
	}
	return st
}

// matches reports whether the hashed pattern is name. d is scratch space.
func (h hashedHost) matches(d hash.Hash, name []byte) bool {
	u := d.(encoding.BinaryUnmarshaler)
	if u.UnmarshalBinary(h.inner) != nil {
		return false
	}
	d.Write(name)
	var in [sha1.Size]byte
	d.Sum(in[:0])
	if u.UnmarshalBinary(h.outer) != nil {
		return false
	}
	d.Write(in[:])
	var out [sha1.Size]byte
	return subtle.ConstantTimeCompare(d.Sum(out[:0]), h.sum) == 1
}

// matchesName applies OpenSSH's rule to a plain pattern list: some pattern
// matches and no negated one does.
func (l *knownLine) matchesName(name string) bool {
	ok := false
	for _, p := range l.patterns {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if m, _ := path.Match(globOnly(p), name); m || p == name {
			if neg {
				return false
			}
			ok = true
		}
	}
	return ok
}

// globOnly escapes the characters path.Match treats specially besides * and
// ? (known_hosts patterns know only those two), e.g. the brackets of [h]:p.
func globOnly(p string) string {
	r := strings.NewReplacer(`[`, `\[`, `]`, `\]`, `\`, `\\`)
	return r.Replace(p)
}

// lookup returns the lines (plain and @cert-authority, not @revoked) for
// name ("host", or "[host]:port" when the port is not 22, lower case), and
// the file's error if it has one.
func (f *knownFile) lookup(name string) ([]*knownLine, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.ix.err != nil {
		return nil, f.ix.err
	}
	if v, ok := f.cache.Load(name); ok {
		return v.([]*knownLine), nil
	}
	out := f.ix.lookup(name)
	f.cache.Store(name, out)
	return out, nil
}

func (ix *knownIndex) lookup(name string) []*knownLine {
	out := append([]*knownLine(nil), ix.exact[name]...)
	for _, l := range ix.patterned {
		if l.matchesName(name) {
			out = append(out, l)
		}
	}
	if len(ix.hashed) > 0 {
		d, bname := sha1.New(), []byte(name)
		for _, l := range ix.hashed {
			if l.matchesHashed(d, name, bname) {
				out = append(out, l)
			}
		}
	}
	return out
}

func (l *knownLine) matchesHashed(d hash.Hash, name string, bname []byte) bool {
	for _, h := range l.hashes {
		if h.matches(d, bname) {
			return true
		}
	}
	return len(l.patterns) > 0 && l.matchesName(name)
}

// isRevoked returns the @revoked line for key, or nil.
func (f *knownFile) isRevoked(key ssh.PublicKey) *knownLine {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.ix.revoked[string(key.Marshal())]
}

// LookupName is the name a host's key is recorded under in known_hosts, as
// OpenSSH writes it: "host" on port 22 (or port 0, which callers use for a
// HostKeyAlias: OpenSSH records an alias without the port), else
// "[host]:port". Lower case, brackets of an IPv6 literal removed first.
func LookupName(name string, port int) string {
	name = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	if port == 0 || port == 22 {
		return name
	}
	return "[" + name + "]:" + strconv.Itoa(port)
}
