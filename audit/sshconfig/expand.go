package sshconfig

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// expandPercent replaces %X tokens from vals; "%%" is a percent sign. An
// unknown token is an error, as in OpenSSH.
func expandPercent(s string, vals map[byte]string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", fmt.Errorf("%q ends with a lone %%", s)
		}
		i++
		if s[i] == '%' {
			b.WriteByte('%')
			continue
		}
		v, ok := vals[s[i]]
		if !ok {
			return "", fmt.Errorf("unknown token %%%c in %q", s[i], s)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// expandEnv replaces ${NAME}; an unset variable is an error, as in OpenSSH.
func expandEnv(s string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		name := s[i+2 : i+j]
		v, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("environment variable ${%s} is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

// expandTilde expands a leading ~ (home) or ~user.
func expandTilde(s, home string) (string, error) {
	if !strings.HasPrefix(s, "~") {
		return s, nil
	}
	name, rest, _ := strings.Cut(s[1:], "/")
	dir := home
	if name != "" {
		u, err := user.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("cannot expand %q: no user %q", s, name)
		}
		dir = u.HomeDir
	}
	return filepath.Join(dir, rest), nil
}

// tokens are the values of OpenSSH's client tokens for one host.
func (h *Host) tokens(home, localUser string) map[byte]string {
	long, _ := os.Hostname()
	short, _, _ := strings.Cut(long, ".")
	port := fmt.Sprint(h.portOr22())
	sum := sha1.Sum([]byte(long + h.HostName + port + h.User))
	alias := cmp.Or(h.HostKeyAlias, h.Alias)
	return map[byte]string{
		'C': hex.EncodeToString(sum[:]), 'd': home, 'h': h.HostName, 'i': fmt.Sprint(os.Getuid()),
		'j': h.ProxyJump, 'k': alias, 'L': short, 'l': long, 'n': h.Alias, 'p': port,
		'r': h.User, 'u': localUser,
	}
}

// expandPath is what OpenSSH does to IdentityFile, CertificateFile,
// IdentityAgent and UserKnownHostsFile: ~, then tokens, then ${ENV}.
func expandPath(s, home string, tok map[byte]string) (string, error) {
	s, err := expandTilde(s, home)
	if err != nil {
		return "", err
	}
	if s, err = expandPercent(s, tok); err != nil {
		return "", err
	}
	return expandEnv(s)
}
