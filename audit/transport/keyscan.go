package transport

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/crypto/ssh"
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
		return nil, newErr(KindProtocol, nil, "connection: local has no host key")
	}
	lname := LookupName(KnownHostsName(t))
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
		err = newErr(KindProtocol, nil, "connected without seeing a host key")
	}
	return nil, err
}

// JumpTarget is the target of t's ProxyJump hop, as dial connects to it
// (its own user, port and name; the host's keys and known_hosts files).
func JumpTarget(t Target) (Target, error) { return jumpTarget(t) }

// KnownHostsName is the name and port t's host key is looked up and
// recorded under: the address dialled and its port, as OpenSSH uses
// HostName. This is the one place that decides it: a HostKeyAlias, once
// Target carries one, is returned here with port 0.
func KnownHostsName(t Target) (name string, port int) { return t.Address, t.Port }
