package transport

import (
	"context"
	"slices"
	"strings"
)

// Shared endpoints: one sshd answering on many addresses (a bastion's
// forwarding, a load balancer, a NAT, the peers bench farm) shows the same
// host key behind every name. A fan-out of 200 opens 200 handshakes on it
// at once; each starts its ConnectTimeout while it waits for that sshd's
// CPU (and beyond MaxStartups' first number, default 10, sshd drops them
// at random), so the last ones ran out of time: 86–90 of 500 hosts lost
// on the farm at --concurrency 200 (issue 31). Handshakes to one host key
// are bounded as through a bastion (DefaultSharedStartups); the wait for a
// slot is kaudit's own queue, bounded by the host's deadline, and
// ConnectTimeout starts when the handshake does.

// DefaultSharedStartups bounds the handshakes in flight to the endpoints
// that share one host key: under sshd's default MaxStartups (10).
const DefaultSharedStartups = 8

// Identity is what identifies the sshd behind name and port in these
// known_hosts files: its recorded keys ("" when none is recorded, or a
// certificate authority vouches for it: then nothing is shared).
func (h *HostKeys) Identity(name string, port int, files KnownHostsFiles) string {
	lname := LookupName(name, port)
	var keys []string
	for _, p := range files.all() {
		lines, err := h.file(p).lookup(lname)
		if err != nil {
			return ""
		}
		for _, l := range lines {
			if l.marker != "" {
				return ""
			}
			keys = append(keys, l.blob)
		}
	}
	slices.Sort(keys)
	return strings.Join(slices.Compact(keys), "\x00")
}

// sharedSlot waits (bounded by ctx) for a handshake slot of the sshd ep's
// known host key names; release gives it back. An endpoint without a
// recorded key gets no slot to wait for.
func (c *SSH) sharedSlot(ctx context.Context, ep endpoint) (release func(), err error) {
	id := c.HostKeys.Identity(ep.hkName, ep.hkPort, ep.knownHosts)
	if id == "" {
		return func() {}, nil
	}
	c.mu.Lock()
	if c.shared == nil {
		c.shared = map[string]chan struct{}{}
	}
	slots := c.shared[id]
	if slots == nil {
		slots = make(chan struct{}, c.sharedLimit())
		c.shared[id] = slots
	}
	c.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *SSH) sharedLimit() int {
	if c.SharedStartups <= 0 {
		return DefaultSharedStartups
	}
	return c.SharedStartups
}
