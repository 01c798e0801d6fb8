package transport

import (
	"sync"

	"github.com/kaudit/kaudit/audit/facts"
)

// startupsEvidence is how many handshakes to one endpoint must have been
// in flight at once (this one included) for a connection the host closed
// during the handshake to be blamed on sshd's MaxStartups: it drops new
// unauthenticated connections beyond its first number (10 by default,
// often set lower). One connection reset alone is a restarted or killed
// sshd, a firewall, a TCP wrapper: the hint would send the person the
// wrong way.
const startupsEvidence = 4

// startups counts the handshakes in flight per endpoint address, and for
// each the most that were in flight to the same address during it.
type startups struct {
	mu sync.Mutex
	by map[string]*endpointStartups
}

type endpointStartups struct {
	active map[*startup]struct{}
}

// startup is one handshake in flight.
type startup struct {
	addr string
	peak int // the most handshakes to addr in flight at once while this one was
}

// begin registers a handshake to addr; end it with done.
func (s *startups) begin(addr string) *startup {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*endpointStartups{}
	}
	e := s.by[addr]
	if e == nil {
		e = &endpointStartups{active: map[*startup]struct{}{}}
		s.by[addr] = e
	}
	st := &startup{addr: addr}
	e.active[st] = struct{}{}
	n := len(e.active)
	for a := range e.active { // bounded by the fan-out to one address
		a.peak = max(a.peak, n)
	}
	return st
}

// done ends st and reports the most handshakes to its address that were
// in flight at once during it.
func (s *startups) done(st *startup) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.by[st.addr]; e != nil {
		delete(e.active, st)
		if len(e.active) == 0 {
			delete(s.by, st.addr)
		}
	}
	return st.peak
}

// closedDuringHandshake is the error of a handshake the host closed (EOF
// or a reset): the MaxStartups hint only when at least startupsEvidence
// handshakes to that address were in flight at once (peak).
func closedDuringHandshake(err error, addr string, peak int) *Error {
	if peak >= startupsEvidence {
		return newErr(facts.KindProtocol, err, "connection closed by the host during the SSH handshake, with %d connections to %s being opened at once (sshd's MaxStartups drops new unauthenticated connections beyond 10 by default: lower --concurrency, or raise MaxStartups in the host's sshd_config)", peak, addr)
	}
	return newErr(facts.KindProtocol, err, "connection closed by the host during the SSH handshake (sshd restarted or killed, or a firewall or TCP wrapper refused it? see the host's sshd log)")
}
