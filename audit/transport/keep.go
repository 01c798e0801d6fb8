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
//
// A route whose kept connection a Run has taken keeps its place under
// MaxKept until that Run ends (lent): another host finishing meanwhile
// does not take it, so the same hosts stay kept scan after scan instead
// of a kept host's connection being closed, and a new one made for
// another host, whenever the kept host's Run overlaps another's end.

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
// a keepalive within limit, else nil (and closes it); either way key's
// place stays lent until putKept or unlend.
func (c *SSH) takeKept(ctx context.Context, key string, limit time.Duration) *ssh.Client {
	c.mu.Lock()
	client, had := c.kept[key]
	if had {
		delete(c.kept, key)
		if c.lent == nil {
			c.lent = map[string]bool{}
		}
		c.lent[key] = true
	}
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
// kept); past MaxKept other routes' connections, kept or lent, it closes
// client instead. A lent key has its place.
func (c *SSH) putKept(key string, client *ssh.Client) {
	c.mu.Lock()
	if c.kept == nil {
		c.kept = map[string]*ssh.Client{}
	}
	old, had := c.kept[key]
	placed := had || c.lent[key]
	delete(c.lent, key)
	if !placed && c.MaxKept > 0 && len(c.kept)+len(c.lent) >= c.MaxKept {
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

// unlend gives up key's place when its Run kept no connection.
func (c *SSH) unlend(key string) {
	c.mu.Lock()
	delete(c.lent, key)
	c.mu.Unlock()
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
