package transport

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/sshconfig"
	"github.com/kaudit/kaudit/internal/located"
)

// endpoint is one SSH server kaudit authenticates to (a target or one of
// its jump hosts) with every connection setting resolved: the inventory's
// own values first, then ssh_config, then kaudit's defaults.
type endpoint struct {
	label       string // how messages name it: inventory name or ProxyJump hop
	addr        string // host:port to dial
	hostKeyName string // host:port under which known_hosts is searched (HostKeyAlias or address)
	hkName      string // the name and port HostKeys looks the key up under:
	hkPort      int    // HostKeyAlias with port 0, else HostName and its port
	user        string
	ids         []string // identity files
	idsExplicit bool     // named by the inventory or ssh_config (a missing one is an error)
	certs       []string // CertificateFile entries
	idOnly      bool     // IdentitiesOnly: offer only the keys of ids
	agent       string   // ssh-agent socket; "" = none
	knownHosts  KnownHostsFiles
	policy      string
	hostKeyAlgs string // ssh_config HostKeyAlgorithms as written ("" = from known_hosts)
	timeout     time.Duration
	alive       time.Duration // ServerAliveInterval; 0 = off
	aliveMax    int
	batch       bool // BatchMode: never prompt
}

// maxJumpDepth bounds ProxyJump chains that name each other.
const maxJumpDepth = 8

// route returns the endpoints to go through, jump hosts first, the target last.
func (c *SSH) route(t Target) ([]endpoint, error) {
	cfg, ep, jump, err := c.target(t)
	if err != nil {
		return nil, err
	}
	hops, err := jumpChain(cfg, jump, t, 0)
	if err != nil {
		return nil, err
	}
	return append(hops, ep), nil
}

// target resolves t itself: the ssh_config in force for it (nil when it
// is not used), its endpoint, and the jump chain it goes through (the
// inventory's proxy_jump when given, else ssh_config's ProxyJump).
func (c *SSH) target(t Target) (*sshconfig.Config, endpoint, string, error) {
	cfg := c.Config
	if t.NoSSHConfig {
		cfg = nil
	}
	ep, h, err := resolveEndpoint(cfg, targetQuery(t, cfg != nil), t, t.Given, t.Name)
	if err != nil {
		return nil, ep, "", err
	}
	jump := t.ProxyJump
	if cfg != nil && !t.Given.ProxyJump {
		if h.ProxyCommand != "" {
			return nil, ep, "", newErr(facts.KindUnreachable, nil, "%s", located.WithHint(fmt.Sprintf("ssh_config %s sets ProxyCommand for %s: kaudit runs no local commands", h.Where["proxycommand"], t.Name), "use ProxyJump instead; ProxyCommand 'ssh -W %h:%p HOP' is ProxyJump HOP"))
		}
		jump = h.ProxyJump
	}
	return cfg, ep, jump, nil
}

// targetQuery is what the inventory presets for a target, like ssh's
// command-line options. Without ssh_config every value is taken as given.
// A Target built without Given (tests, callers other than audit.Target)
// still keeps an address or port that differs from the defaults.
func targetQuery(t Target, withConfig bool) sshconfig.Query {
	q := sshconfig.Query{Host: cmp.Or(t.Name, t.Address)}
	if t.Address != "" && (!withConfig || t.Given.Address || t.Address != q.Host) {
		q.HostName = t.Address
	}
	if t.User != "" && (!withConfig || t.Given.User) {
		q.User = t.User
	}
	if t.Port != 0 && (!withConfig || t.Given.Port || t.Port != 22) {
		q.Port = t.Port
	}
	return q
}

// jumpChain resolves a ProxyJump list. As with OpenSSH, the first hop's own
// ProxyJump from ssh_config is followed; the later hops are reached through
// the hops before them, whatever ssh_config says about them.
func jumpChain(cfg *sshconfig.Config, spec string, t Target, depth int) ([]endpoint, error) {
	if spec == "" || strings.EqualFold(spec, "none") {
		return nil, nil
	}
	if depth >= maxJumpDepth {
		return nil, newErr(facts.KindUnreachable, nil, "ProxyJump chain for %s is longer than %d hops (do two jump hosts name each other in ssh_config?)", t.Name, maxJumpDepth)
	}
	var chain []endpoint
	for i, hop := range strings.Split(spec, ",") {
		q, err := parseHop(hop)
		if err != nil {
			return nil, newErr(facts.KindUnreachable, nil, "ProxyJump %q: %v", spec, err)
		}
		ep, h, err := resolveEndpoint(cfg, q, t, Given{}, hop)
		if err != nil {
			return nil, err
		}
		if h != nil && h.ProxyCommand != "" && !(i == 0 && h.ProxyJump != "") {
			return nil, newErr(facts.KindUnreachable, nil, "%s", located.WithHint(fmt.Sprintf("ssh_config %s sets ProxyCommand for jump host %s: kaudit runs no local commands", h.Where["proxycommand"], hop), "use ProxyJump instead"))
		}
		if i == 0 && h != nil && h.ProxyJump != "" {
			pre, err := jumpChain(cfg, h.ProxyJump, t, depth+1)
			if err != nil {
				return nil, err
			}
			chain = append(chain, pre...)
		}
		chain = append(chain, ep)
	}
	return chain, nil
}

// parseHop reads one [ssh://][user@]host[:port] of a ProxyJump list.
func parseHop(s string) (sshconfig.Query, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "ssh://")
	var q sshconfig.Query
	if i := strings.LastIndex(s, "@"); i >= 0 {
		q.User, s = s[:i], s[i+1:]
	}
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return q, fmt.Errorf("bad port %q", p)
		}
		host, q.Port = h, n
	}
	host = strings.Trim(host, "[]")
	if host == "" || strings.HasPrefix(host, "-") {
		return q, fmt.Errorf("bad host %q", host)
	}
	q.Host = host
	return q, nil
}

// resolveEndpoint merges one host's settings. given says which of t's
// values the inventory set for this very host (nothing, for a jump host:
// t's values are then only the fallback kaudit has always used). cfg nil
// means no ssh_config.
func resolveEndpoint(cfg *sshconfig.Config, q sshconfig.Query, t Target, given Given, label string) (endpoint, *sshconfig.Host, error) {
	var h *sshconfig.Host
	if cfg != nil {
		var err error
		if h, err = cfg.Resolve(q); err != nil {
			return endpoint{}, nil, newErr(facts.KindUnreachable, err, "ssh_config for %s: %v", label, err)
		}
	} else {
		h = &sshconfig.Host{Alias: q.Host, HostName: q.Host, User: q.User, Port: q.Port, Where: map[string]string{}}
		if q.HostName != "" {
			h.HostName = q.HostName
		}
	}
	ep := endpoint{label: label, timeout: t.ConnectTimeout, alive: h.ServerAliveInterval, aliveMax: h.ServerAliveCountMax, batch: h.BatchMode == sshconfig.Yes,
		certs: h.CertificateFiles, idOnly: h.IdentitiesOnly == sshconfig.Yes, hostKeyAlgs: h.HostKeyAlgorithms}
	user := q.User
	if user == "" {
		user = t.User
		if _, set := h.Where["user"]; set && cfg != nil {
			user = h.User
		}
	}
	if user == "" {
		user = LocalUser()
	}
	ep.user = user
	port := cmp.Or(h.Port, 22)
	ep.addr = hostPort(h.HostName, port)
	ep.hostKeyName, ep.hkName, ep.hkPort = ep.addr, h.HostName, port
	if h.HostKeyAlias != "" {
		ep.hostKeyName = hostPort(h.HostKeyAlias, 22) // OpenSSH records an alias without the port
		ep.hkName, ep.hkPort = h.HostKeyAlias, 0
	}
	if !given.ConnectTimeout && h.ConnectTimeout > 0 {
		ep.timeout = h.ConnectTimeout
	}
	if ep.timeout <= 0 {
		ep.timeout = DefaultConnectTimeout
	}
	ep.ids, ep.idsExplicit = identities(t, given, h)
	ep.agent = agentSocket(t, given, h)
	ep.knownHosts, ep.policy = hostKeySettings(t, given, h, cfg != nil)
	return ep, h, nil
}

func identities(t Target, given Given, h *sshconfig.Host) ([]string, bool) {
	switch {
	case given.IdentityFiles && len(t.IdentityFiles) > 0:
		return t.IdentityFiles, true
	case len(h.IdentityFiles) > 0:
		return h.IdentityFiles, true
	case len(t.IdentityFiles) > 0:
		return t.IdentityFiles, true
	}
	return DefaultIdentityFiles(), false
}

func agentSocket(t Target, given Given, h *sshconfig.Host) string {
	if given.UseAgent && !t.UseAgent {
		return ""
	}
	if !given.UseAgent {
		switch h.IdentityAgent {
		case "none":
			return ""
		case "", "SSH_AUTH_SOCK":
		default:
			return h.IdentityAgent
		}
		if !t.UseAgent && h.IdentityAgent == "" {
			return ""
		}
	}
	return os.Getenv("SSH_AUTH_SOCK")
}

// hostKeySettings picks the known_hosts files and policy. ssh_config's
// StrictHostKeyChecking no is read as accept-new: kaudit never connects to
// a host whose key changed.
func hostKeySettings(t Target, given Given, h *sshconfig.Host, withConfig bool) (KnownHostsFiles, string) {
	files, policy := KnownHostsFiles{User: t.KnownHosts}, t.HostKeyPolicy
	if !given.KnownHosts && withConfig {
		if h.UserKnownHostsFiles != nil {
			files.User = h.UserKnownHostsFiles
		}
		files.Global = h.GlobalKnownHostsFiles
		if files.Global == nil {
			files.Global = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}
		}
	}
	if !given.HostKeyPolicy {
		switch h.StrictHostKeyChecking {
		case "yes", "ask":
			policy = PolicyStrict
		case "accept-new", "no":
			policy = PolicyAcceptNew
		}
	}
	policy = cmp.Or(policy, PolicyStrict)
	return files, policy
}

// DefaultIdentityFiles are tried, like OpenSSH, when a host names none.
func DefaultIdentityFiles() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	return []string{
		filepath.Join(home, ".ssh", "id_ed25519"),
		filepath.Join(home, ".ssh", "id_ecdsa"),
		filepath.Join(home, ".ssh", "id_rsa"),
	}
}

// LocalUser is the login name kaudit runs as, ssh's default user.
func LocalUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}
