package transport

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/facts"
)

// errCaptured ends a handshake once the host key of a fetched host is known.
var errCaptured = errors.New("host key fetched")

// capturedKey is the slot FetchHostKey waits on.
type capturedKey struct {
	mu   sync.Mutex
	refs int
	key  ssh.PublicKey
}

// captured records key when lname is being fetched; true stops the
// handshake there (before any authentication to that host).
func (h *HostKeys) captured(lname string, key ssh.PublicKey) bool {
	h.mu.Lock()
	c := h.capture[lname]
	h.mu.Unlock()
	if c == nil {
		return false
	}
	c.mu.Lock()
	c.key = key
	c.mu.Unlock()
	return true
}

// Pin trusts key for name and port for the rest of this run without writing
// it anywhere: kaudit trust pins a bastion's freshly fetched key so that it
// can reach the hosts behind it before the user confirms anything.
func (h *HostKeys) Pin(name string, port int, key ssh.PublicKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pinned[LookupName(name, port)] = string(plainKey(key).Marshal())
}

func (h *HostKeys) isPinned(lname string, key ssh.PublicKey) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.pinned[lname]
	return ok && b == string(plainKey(key).Marshal())
}

// FetchHostKey connects to t the way a scan does (through its ProxyJump,
// whose own host key is verified as usual) and returns the host key t
// offers, stopping the handshake before authenticating to t. The key is
// whatever t offers for the algorithms Algorithms lists, so a known host
// shows the key type recorded for it. Local targets have no host key.
func (c *SSH) FetchHostKey(ctx context.Context, t Target) (ssh.PublicKey, error) {
	if t.Local {
		return nil, newErr(facts.KindProtocol, nil, "connection: local has no host key")
	}
	lname := LookupName(c.KnownHostsName(t))
	h := c.HostKeys
	h.mu.Lock()
	slot := h.capture[lname]
	if slot == nil {
		slot = &capturedKey{}
		h.capture[lname] = slot
	}
	slot.refs++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if slot.refs--; slot.refs == 0 {
			delete(h.capture, lname)
		}
		h.mu.Unlock()
	}()

	_, err := c.Run(ctx, t, nil) // the handshake stops at the host key: nothing runs
	slot.mu.Lock()
	key := slot.key
	slot.mu.Unlock()
	if key != nil {
		return key, nil
	}
	if err == nil {
		err = newErr(facts.KindProtocol, nil, "connected without seeing a host key")
	}
	return nil, err
}

// JumpTarget is the target of t's inventory proxy_jump hop next to t (the
// last of a comma-separated chain, reached through the hops before it), as
// the scan connects to it: its own user, port and name, t's known_hosts
// files. Jump hosts that only ssh_config names are not returned: their
// keys must already be known.
func JumpTarget(t Target) (Target, error) {
	hops := strings.Split(t.ProxyJump, ",")
	spec := strings.TrimSpace(hops[len(hops)-1])
	jt := t
	jt.ProxyJump, jt.Become, jt.Port = strings.Join(hops[:len(hops)-1], ","), "", 22
	jt.Given.Port, jt.Given.User, jt.Given.ProxyJump = false, false, len(hops) > 1
	if i := strings.LastIndex(spec, "@"); i >= 0 {
		jt.User, spec = spec[:i], spec[i+1:]
		jt.Given.User = true
	}
	host, port := spec, ""
	if h, p, err := net.SplitHostPort(spec); err == nil {
		host, port = h, p
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, newErr(facts.KindUnreachable, nil, "proxy_jump %q: bad port", t.ProxyJump)
		}
		jt.Port, jt.Given.Port = n, true
	}
	jt.Address, jt.Name = host, host
	return jt, nil
}

// KnownHostsName is the name and port t's host key is looked up and
// recorded under, resolved as a connection resolves it (ssh_config's
// HostName and HostKeyAlias included): a HostKeyAlias with port 0, else
// the host dialled and its port. This is the one place that decides it.
func (c *SSH) KnownHostsName(t Target) (name string, port int) {
	name, port, _ = c.HostKeyLookup(t)
	return name, port
}

// HostKeyLookup is KnownHostsName and the known_hosts files t's key is
// checked against and recorded in (ssh_config's UserKnownHostsFile and
// GlobalKnownHostsFile included), from one resolution of t.
func (c *SSH) HostKeyLookup(t Target) (name string, port int, files KnownHostsFiles) {
	eps, err := c.route(t)
	if err != nil || len(eps) == 0 {
		return t.Address, t.Port, KnownHostsFiles{User: t.KnownHosts}
	}
	ep := eps[len(eps)-1]
	return ep.hkName, ep.hkPort, ep.knownHosts
}
