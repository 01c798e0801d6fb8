package parse

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// EstablishedCounts parses the gather's count of ESTABLISHED connections
// per local address:port (sockets.awk over the gather's one ss run): one "ADDRESS:PORT COUNT" line each, in any order. The
// result is sorted by port, then address. Empty text is no connection.
func EstablishedCounts(text string) ([]facts.LocalConns, error) {
	out := make([]facts.LocalConns, 0)
	for _, l := range nonBlankLines(text) {
		f := strings.Fields(l.text)
		if len(f) != 2 {
			return nil, fmt.Errorf("established: line %d: expected \"ADDRESS:PORT COUNT\", got %q", l.n, clip(l.text))
		}
		addr, port, err := splitSSAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("established: line %d: %w", l.n, err)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("established: line %d: count %q is not a number", l.n, f[1])
		}
		out = append(out, facts.LocalConns{Addr: addr, Port: port, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Port != out[j].Port {
			return out[i].Port < out[j].Port
		}
		return out[i].Addr < out[j].Addr
	})
	return out, nil
}

var wscaleRE = regexp.MustCompile(`(?:^|\s)wscale:(\d+),(\d+)(?:\s|$)`)

// SSTCPInfo parses `ss -tin` output (also `state established`, with or
// without the State column, with or without a header, and sockets.awk's
// shrunk form whose info lines hold only the wscale token or "-"): one
// socket line "[State] Recv-Q Send-Q Local:Port Peer:Port", then an
// indented info line. wscale:SND,RCV there gives the window scales; an
// info line without it (window scaling off) gives -1, -1. Only ESTAB rows
// are kept when a State column is present. A socket line that is not one
// is an error.
func SSTCPInfo(text string) ([]facts.Conn, error) {
	out := make([]facts.Conn, 0)
	var cur *facts.Conn
	for _, l := range nonBlankLines(text) {
		if l.text[0] == ' ' || l.text[0] == '\t' {
			if cur != nil {
				cur.SndWscale, cur.RcvWscale = wscales(l.text)
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		f := strings.Fields(l.text)
		if isSSHeader(f) {
			continue
		}
		if cur != nil { // a socket without an info line (ss without -i)
			out = append(out, *cur)
		}
		c, keep, err := ssConnRow(f, l)
		if err != nil {
			return nil, err
		}
		cur = nil
		if keep {
			cur = &c
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out, nil
}

func ssConnRow(f []string, l numberedLine) (facts.Conn, bool, error) {
	c := facts.Conn{SndWscale: -1, RcvWscale: -1}
	i := 0
	if len(f) > 0 && isSSState(f[0]) {
		if f[0] != "ESTAB" {
			return c, false, nil
		}
		i = 1
	}
	if len(f) < i+4 || !isNumber(f[i]) || !isNumber(f[i+1]) {
		return c, false, fmt.Errorf("ss -ti: line %d: expected \"Recv-Q Send-Q Local:Port Peer:Port\", got %q", l.n, clip(l.text))
	}
	var err error
	if c.Local, c.LocalPort, err = splitSSAddr(f[i+2]); err != nil {
		return c, false, fmt.Errorf("ss -ti: line %d: %w", l.n, err)
	}
	if c.Peer, c.PeerPort, err = splitSSAddr(f[i+3]); err != nil {
		return c, false, fmt.Errorf("ss -ti: line %d: peer: %w", l.n, err)
	}
	return c, true, nil
}

// wscales reads wscale:SND,RCV from an ss info line; -1, -1 without one.
func wscales(info string) (int, int) {
	m := wscaleRE.FindStringSubmatch(info)
	if m == nil {
		return -1, -1
	}
	snd, err1 := strconv.Atoi(m[1])
	rcv, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return snd, rcv
}

// ConnsSection parses the gather's conns section: sockets.awk's bounded
// `ss -tin` (see SSTCPInfo) and its last line "total=N", the number of
// sockets on the host before the bound (N ≥ the sockets listed).
func ConnsSection(text string) ([]facts.Conn, int, error) {
	body := strings.TrimRight(text, "\n ")
	k := strings.LastIndexByte(body, '\n')
	last := body[k+1:]
	n, err := strconv.Atoi(strings.TrimPrefix(last, "total="))
	if !strings.HasPrefix(last, "total=") || err != nil || n < 0 {
		return nil, 0, fmt.Errorf("conns: last line %q is not \"total=N\"", clip(last))
	}
	conns, err := SSTCPInfo(body[:k+1])
	if err != nil {
		return nil, 0, err
	}
	if n < len(conns) {
		return nil, 0, fmt.Errorf("conns: total=%d but %d connections listed", n, len(conns))
	}
	return conns, n, nil
}
