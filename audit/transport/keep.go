package transport

import (
	"context"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Kept connections (SSH.KeepConnections, kaudit serve): a host's
// connection outlives Run, and the next Run to the same route opens a new
// session on it instead of a TCP connection, a key exchange and an
// authentication. A kept connection is checked with one
// keepalive@openssh.com request before it is used; one that does not
// answer within the connect timeout, or whose session fails, is closed
// and a new connection made in its place, once. Close closes them all.

// keepKey names a route: the target and every hop, as dialled.
func keepKey(t Target, eps []endpoint) string {
	var b strings.Builder
	b.WriteString(t.Name)
	for _, ep := range eps {
		b.WriteString("\x00" + ep.user + "@" + ep.addr + "/" + ep.hostKeyName)
	}
	return b.String()
}

// takeKept removes and returns the kept connection of key if it answers
// a keepalive within limit, else nil (and closes it).
func (c *SSH) takeKept(ctx context.Context, key string, limit time.Duration) *ssh.Client {
	c.mu.Lock()
	client := c.kept[key]
	delete(c.kept, key)
	c.mu.Unlock()
	if client == nil {
		return nil
	}
	if limit <= 0 {
		limit = DefaultConnectTimeout
	}
	answered := make(chan error, 1)
	go func() {
		_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
		answered <- err
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-answered:
		if err == nil {
			return client
		}
	case <-t.C:
	case <-ctx.Done():
	}
	client.Close()
	return nil
}

// putKept keeps client for the next Run of key (closing one already
// kept); past MaxKept other routes' connections it closes client instead.
func (c *SSH) putKept(key string, client *ssh.Client) {
	c.mu.Lock()
	if c.kept == nil {
		c.kept = map[string]*ssh.Client{}
	}
	old, had := c.kept[key]
	if !had && c.MaxKept > 0 && len(c.kept) >= c.MaxKept {
		c.mu.Unlock()
		client.Close()
		return
	}
	c.kept[key] = client
	c.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// closeKept closes every kept connection (Close).
func (c *SSH) closeKept() {
	c.mu.Lock()
	kept := c.kept
	c.kept = nil
	c.mu.Unlock()
	for _, k := range kept {
		k.Close()
	}
}

// KeptConnections is how many connections are kept now.
func (c *SSH) KeptConnections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.kept)
}
