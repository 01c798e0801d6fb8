package serve

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what HTTP clients may hold of kaudit serve, so that a
// flood of connections never takes the open files a scan needs, nor locks
// out the scrapes (issue 34, row 8: 300 idle keep-alive connections stayed
// open 135 s; about 1,000 took every file).
type Limits struct {
	// MaxConns is the most connections open at once (DefaultMaxConns when
	// 0). One more that arrives closes the connections waiting idle for
	// a next request (keep-alive) to make room; with none idle it waits
	// in the listen queue until one ends.
	MaxConns int
	// ReadHeader, Read, Write and Idle are http.Server's timeouts (the
	// Default* values when 0): a request's headers, a whole request, a
	// response, and a keep-alive connection's wait for its next request.
	ReadHeader, Read, Write, Idle time.Duration
}

// Defaults of Limits. Write is long enough for /report.html of 10,000
// hosts to a slow client; Idle longer than Prometheus's scrape interval
// would only hold a file for nothing.
const (
	DefaultMaxConns          = 64
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 2 * time.Minute
	DefaultIdleTimeout       = 30 * time.Second
)

func (l Limits) orDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	def(&l.ReadHeader, DefaultReadHeaderTimeout)
	def(&l.Read, DefaultReadTimeout)
	def(&l.Write, DefaultWriteTimeout)
	def(&l.Idle, DefaultIdleTimeout)
	return l
}

// apply sets l's timeouts on srv.
func (l Limits) apply(srv *http.Server) {
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout = l.ReadHeader, l.Read, l.Write, l.Idle
}

// connLimiter is a listener that holds at most max connections open,
// closing idle keep-alive ones to make room (Limits.MaxConns).
type connLimiter struct {
	net.Listener
	slots  chan struct{}
	closed chan struct{}
	once   sync.Once

	mu   sync.Mutex
	idle map[net.Conn]bool // open connections: true while idle (http.StateIdle)
}

func limitConns(l net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: l, slots: make(chan struct{}, max), closed: make(chan struct{}), idle: map[net.Conn]bool{}}
}

// Close closes the listener, also while Accept waits for a slot.
func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Accept takes the next connection, then waits for a slot for it: with
// none free it closes the connections waiting idle for a next request and
// waits for one of them to end (so at most max connections plus the one
// waiting are open).
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		l.closeIdle()
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	lc := &limitedConn{Conn: c, l: l}
	l.mu.Lock()
	l.idle[lc] = false
	l.mu.Unlock()
	return lc, nil
}

// closeIdle closes the connections waiting idle for a next request.
func (l *connLimiter) closeIdle() {
	l.mu.Lock()
	var idle []net.Conn
	for c, isIdle := range l.idle {
		if isIdle {
			idle = append(idle, c)
		}
	}
	l.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// track is http.Server.ConnState: it marks connections idle or busy.
func (l *connLimiter) track(c net.Conn, st http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.idle[c]; open {
		l.idle[c] = st == http.StateIdle
	}
}

// Open is how many connections are open now.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.idle)
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.idle, c)
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}
