package sshconfig

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Tri is a yes/no setting that may be absent.
type Tri int8

// Tri values.
const (
	Unset Tri = iota
	Yes
	No
)

// Host is the evaluated configuration of one host: only what kaudit uses.
// A zero value means "not set by any file" (the caller's default applies),
// except HostName and User, which carry OpenSSH's own defaults (the name
// given, the local user). Paths are expanded.
type Host struct {
	Alias    string // the name as given
	HostName string // lowercase; the alias when not set
	User     string // the local user when not set
	Port     int    // 0 = not set (22)

	IdentityFiles    []string
	CertificateFiles []string
	IdentitiesOnly   Tri
	IdentityAgent    string // "" = not set (SSH_AUTH_SOCK); "none"; or a socket path

	ProxyJump    string // "" = not set or none: direct
	ProxyCommand string // set: kaudit refuses the host (it runs no local commands)

	UserKnownHostsFiles   []string // nil = not set; empty = none
	GlobalKnownHostsFiles []string
	StrictHostKeyChecking string // "" | yes | ask | accept-new | no
	HostKeyAlias          string
	HostKeyAlgorithms     string // as written: may start with + - ^

	ConnectTimeout      time.Duration // 0 = not set
	ServerAliveInterval time.Duration // 0 = not set or off
	ServerAliveCountMax int           // 0 = not set (3)
	BatchMode           Tri

	// Where says which file:line set each keyword used (lowercase keys).
	Where map[string]string
}

func (h *Host) portOr22() int {
	if h.Port == 0 {
		return 22
	}
	return h.Port
}

// result turns the obtained values into a Host, validating each and
// expanding tokens where OpenSSH does.
func (st *state) result() (*Host, error) {
	h := &Host{Alias: st.q.Host, HostName: st.hostname, User: st.remoteUser(), Where: map[string]string{}}
	for k, v := range st.vals {
		h.Where[k] = v.where
	}
	if v, ok := st.vals["canonicalizehostname"]; ok && !strings.EqualFold(v.args[0], "no") {
		st.c.warn("canon:"+v.where, fmt.Sprintf("ssh_config %s: CanonicalizeHostname is not done by kaudit: host names are used as written (Match canonical applies in the final pass)", v.where))
	}
	for _, step := range []func(*Host) error{st.scalars, st.durations, st.paths} {
		if err := step(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (st *state) scalars(h *Host) error {
	var err error
	if v, ok := st.vals["port"]; ok {
		if h.Port, err = parsePort(v.args[0]); err != nil {
			return fmt.Errorf("%s: Port: %v", v.where, err)
		}
	}
	for key, dst := range map[string]*Tri{"identitiesonly": &h.IdentitiesOnly, "batchmode": &h.BatchMode} {
		if v, ok := st.vals[key]; ok {
			if *dst, err = parseYesNo(v.args[0]); err != nil {
				return fmt.Errorf("%s: %s: %v", v.where, key, err)
			}
		}
	}
	if v, ok := st.vals["stricthostkeychecking"]; ok {
		if h.StrictHostKeyChecking, err = parseStrict(v.args[0]); err != nil {
			return fmt.Errorf("%s: StrictHostKeyChecking: %v", v.where, err)
		}
	}
	if v, ok := st.vals["proxyjump"]; ok && !strings.EqualFold(v.args[0], "none") {
		h.ProxyJump = v.args[0]
	}
	if v, ok := st.vals["proxycommand"]; ok && !strings.EqualFold(v.args[0], "none") {
		h.ProxyCommand = strings.Join(v.args, " ")
	}
	if v, ok := st.vals["hostkeyalias"]; ok {
		h.HostKeyAlias = v.args[0]
	}
	if v, ok := st.vals["hostkeyalgorithms"]; ok {
		h.HostKeyAlgorithms = v.args[0]
	}
	if v, ok := st.vals["serveralivecountmax"]; ok {
		n, err := strconv.Atoi(v.args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("%s: ServerAliveCountMax: %q is not a positive number", v.where, v.args[0])
		}
		h.ServerAliveCountMax = n
	}
	return nil
}

func (st *state) durations(h *Host) error {
	for key, dst := range map[string]*time.Duration{"connecttimeout": &h.ConnectTimeout, "serveraliveinterval": &h.ServerAliveInterval} {
		if v, ok := st.vals[key]; ok {
			d, err := parseTime(v.args[0])
			if err != nil {
				return fmt.Errorf("%s: %s: %v", v.where, key, err)
			}
			*dst = d
		}
	}
	return nil
}

func (st *state) paths(h *Host) error {
	home := st.c.opt.Home
	tok := h.tokens(home, st.c.opt.LocalUser)
	exp := func(v value, s string) (string, error) {
		p, err := expandPath(s, home, tok)
		if err != nil {
			return "", fmt.Errorf("%s: %v", v.where, err)
		}
		return p, nil
	}
	for key, dst := range map[string]*[]string{"identityfile": &h.IdentityFiles, "certificatefile": &h.CertificateFiles} {
		for _, v := range st.multi[key] {
			p, err := exp(v, v.args[0])
			if err != nil {
				return err
			}
			*dst = append(*dst, p)
		}
	}
	if v, ok := st.vals["identityagent"]; ok {
		a := v.args[0]
		switch {
		case a == "none" || a == "SSH_AUTH_SOCK":
		case strings.HasPrefix(a, "$") && !strings.HasPrefix(a, "${"):
			a = "${" + a[1:] + "}"
			fallthrough
		default:
			p, err := exp(v, a)
			if err != nil {
				return err
			}
			a = p
		}
		h.IdentityAgent = a
	}
	if v, ok := st.vals["userknownhostsfile"]; ok {
		h.UserKnownHostsFiles = []string{}
		for _, f := range v.args {
			if f == "none" {
				continue
			}
			p, err := exp(v, f)
			if err != nil {
				return err
			}
			h.UserKnownHostsFiles = append(h.UserKnownHostsFiles, p)
		}
	}
	if v, ok := st.vals["globalknownhostsfile"]; ok {
		h.GlobalKnownHostsFiles = []string{}
		for _, f := range v.args {
			if f != "none" {
				h.GlobalKnownHostsFiles = append(h.GlobalKnownHostsFiles, f)
			}
		}
	}
	return nil
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		p, lerr := net.LookupPort("tcp", s)
		if lerr != nil {
			return 0, fmt.Errorf("%q is not a port number", s)
		}
		n = p
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("%d is out of range 1-65535", n)
	}
	return n, nil
}

func parseYesNo(s string) (Tri, error) {
	switch strings.ToLower(s) {
	case "yes", "true":
		return Yes, nil
	case "no", "false":
		return No, nil
	}
	return Unset, fmt.Errorf("%q: expected yes or no", s)
}

func parseStrict(s string) (string, error) {
	switch strings.ToLower(s) {
	case "yes", "true":
		return "yes", nil
	case "no", "false", "off":
		return "no", nil
	case "ask":
		return "ask", nil
	case "accept-new":
		return "accept-new", nil
	}
	return "", fmt.Errorf("%q: expected yes, accept-new, no or ask", s)
}

// parseTime is OpenSSH's convtime: seconds, or a sequence of NUMBER[smhdw].
func parseTime(s string) (time.Duration, error) {
	if strings.EqualFold(s, "none") {
		return 0, nil
	}
	var total time.Duration
	rest := strings.ToLower(s)
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(rest[:i])
		if i == 0 || err != nil {
			return 0, fmt.Errorf("%q is not a time (seconds, or e.g. 1m30s)", s)
		}
		unit := time.Second
		if i < len(rest) {
			u, ok := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[rest[i]]
			if !ok {
				return 0, fmt.Errorf("%q is not a time (seconds, or e.g. 1m30s)", s)
			}
			unit, i = u, i+1
		}
		total += time.Duration(n) * unit
		rest = rest[i:]
	}
	return total, nil
}
