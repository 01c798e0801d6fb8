package transport

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/kaudit/kaudit/audit/facts"
)

// DefaultBastionStartups bounds the connections being opened and
// authenticated through one jump host at once: well below sshd's
// MaxStartups (default 10:30:100, which drops 30% of new unauthenticated
// connections beyond 10), so targets that share one sshd behind a bastion
// are not refused. The margin is needed: sshd frees a startup slot only
// when the child reports the authentication, a moment after the client
// saw it (8 still lost 2 of 200 connections to one sshd, in the e2e test).
const DefaultBastionStartups = 4

// hop is one authenticated connection to a jump host, opened once per scan
// and shared by every target routed through it (each target is one
// direct-tcpip channel on it).
type hop struct {
	key    string
	label  string
	ready  chan struct{} // closed when client or err is set
	client *ssh.Client
	err    *Error
	slots  chan struct{} // handshakes in flight through this hop
	lost   atomic.Bool   // the connection dropped after it was up
	gone   chan struct{} // closed when it dropped
	alive  *keepalive
}

// chainKey names a chain of hops: the same user, address and port reached
// the same way is one connection.
func chainKey(chain []endpoint) string {
	var parts []string
	for _, ep := range chain {
		parts = append(parts, ep.user+"@"+ep.addr)
	}
	return strings.Join(parts, ",")
}

// hopFor returns the connection to the last endpoint of chain, dialing it
// (and the hops before it) once; concurrent callers wait for that one dial.
// A hop that failed stays failed for the scan: every host behind it gets
// the same error, and the failure is warned about once.
func (c *SSH) hopFor(ctx context.Context, chain []endpoint) (*hop, error) {
	key := chainKey(chain)
	c.mu.Lock()
	h, ok := c.hops[key]
	if !ok {
		h = &hop{key: key, label: chain[len(chain)-1].label, ready: make(chan struct{}), gone: make(chan struct{}),
			slots: make(chan struct{}, c.bastionStartups())}
		c.hops[key] = h
	}
	c.mu.Unlock()
	if !ok {
		c.dialHop(ctx, h, chain)
	}
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, classify(ctx.Err(), "connect")
	}
	if h.err != nil {
		return nil, h.err
	}
	return h, nil
}

func (c *SSH) bastionStartups() int {
	if c.BastionStartups > 0 {
		return c.BastionStartups
	}
	return DefaultBastionStartups
}

// dialHop connects h. The dial is not bound to the first caller's deadline
// (other hosts wait for it too) but to the hop's own ConnectTimeout.
func (c *SSH) dialHop(ctx context.Context, h *hop, chain []endpoint) {
	defer close(h.ready)
	ep := chain[len(chain)-1]
	var via *hop
	if len(chain) > 1 {
		v, err := c.hopFor(ctx, chain[:len(chain)-1])
		if err != nil {
			h.err = AsError(err) // names the hop that failed
			return
		}
		via = v
	}
	client, err := c.connect(context.WithoutCancel(ctx), ep, via)
	if err != nil {
		e := AsError(via.explain(err))
		h.err = newErr(facts.KindUnreachable, e, "bastion %s (%s): %s", ep.label, ep.addr, e.Msg)
		c.warnOnce("hop:"+h.key, fmt.Sprintf("bastion %s (%s) failed: %s; every host behind it is reported unreachable", ep.label, ep.addr, e.Msg))
		return
	}
	h.client = client
	h.alive = startKeepalive(client, ep)
	go func() {
		_ = client.Wait()
		h.lost.Store(true)
		close(h.gone)
		c.mu.Lock()
		if c.hops[h.key] == h {
			delete(c.hops, h.key) // hosts started later dial it again
		}
		c.mu.Unlock()
	}()
}

// acquire takes a handshake slot on h; release gives it back.
func (h *hop) acquire(ctx context.Context) (release func(), err error) {
	select {
	case h.slots <- struct{}{}:
		return func() { <-h.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dial opens a direct-tcpip channel to addr through h.
func (h *hop) dial(ctx context.Context, addr string) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := h.client.Dial("tcp", addr)
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, newErr(facts.KindUnreachable, r.err, "bastion %s cannot open a connection to %s: %s", h.label, addr, trimSSH(r.err.Error()))
		}
		return r.c, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("connect to %s through bastion %s: %w", addr, h.label, ctx.Err())
	}
}

// lostGrace is how long a failure through a bastion waits to learn whether
// the bastion connection itself went down (its reader notices a moment
// after the channels do).
const lostGrace = 300 * time.Millisecond

// explain names the bastion when a connection through it failed because
// the bastion itself went away. h may be nil (a direct connection).
func (h *hop) explain(err error) error {
	if h == nil || err == nil {
		return err
	}
	select {
	case <-h.gone:
	case <-time.After(lostGrace):
	}
	if h.alive != nil && h.alive.dead.Load() || h.lost.Load() {
		return newErr(facts.KindUnreachable, err, "connection to bastion %s lost (%s)", h.label, AsError(err).Msg)
	}
	return err
}

// Close ends every shared jump-host connection and every kept one
// (KeepConnections). Safe to call more than once.
func (c *SSH) Close() error {
	c.closeKept()
	c.mu.Lock()
	hops := c.hops
	c.hops = map[string]*hop{}
	c.mu.Unlock()
	for _, h := range hops {
		select {
		case <-h.ready:
			if h.client != nil {
				h.alive.stop()
				h.client.Close()
			}
		default:
		}
	}
	return nil
}

// keepalive is OpenSSH's ServerAlive: a keepalive@openssh.com request
// every interval; CountMax intervals without an answer and the connection
// is closed as dead.
type keepalive struct {
	dead atomic.Bool
	done chan struct{}
}

func startKeepalive(client *ssh.Client, ep endpoint) *keepalive {
	k := &keepalive{done: make(chan struct{})}
	if ep.alive <= 0 {
		return k
	}
	max := ep.aliveMax
	if max <= 0 {
		max = 3
	}
	go k.run(client, ep.alive, max)
	return k
}

func (k *keepalive) run(client *ssh.Client, every time.Duration, max int) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var missed, inFlight atomic.Int32
	for {
		select {
		case <-k.done:
			return
		case <-tick.C:
		}
		if missed.Add(1) > int32(max) {
			k.dead.Store(true)
			client.Close()
			return
		}
		if inFlight.CompareAndSwap(0, 1) {
			go func() {
				_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
				if err == nil {
					missed.Store(0)
				}
				inFlight.Store(0)
			}()
		}
	}
}

func (k *keepalive) stop() {
	if k == nil {
		return
	}
	select {
	case <-k.done:
	default:
		close(k.done)
	}
}
