package parse

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// SSListeners parses the output of `ss -ltn` or `ss -ltnp` into TCP LISTEN
// sockets. It accepts every layout iproute2 has printed:
//
//   - old (iproute 3.10/4.11, CentOS 7): "State      Recv-Q Send-Q Local Address:Port …",
//     addresses ":::9092", "*:9092", "::ffff:127.0.0.1:8005", "[::]:22";
//   - new (iproute2 5.x/6.x): "State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess",
//     addresses "[::]:9092", "0.0.0.0:9092", "127.0.0.53%lo:53", "[::ffff:127.0.0.1]:9094";
//   - a leading Netid column (ss -a / -tu): only "tcp" rows are kept;
//   - no header (-H or a grep);
//   - no State column (`ss -tn state listening`): every row is a listener.
//
// Rows in another state than LISTEN are skipped. Recv-Q becomes Queue (the
// accept queue) and Send-Q Backlog (the effective backlog). With -p the first
// user in users:(("java",pid=1234,fd=123),…) gives Process and PID. Ports must
// be numeric (ss -n). A line that is none of the above is an error.
func SSListeners(text string) ([]facts.Listener, error) {
	out := make([]facts.Listener, 0)
	hasHeader := false
	var hdrNetid, hdrState bool
	rows := 0
	for _, l := range nonBlankLines(text) {
		f := strings.Fields(l.text)
		if isSSHeader(f) {
			if rows > 0 || hasHeader {
				return nil, fmt.Errorf("ss: line %d: unexpected second header %q", l.n, clip(l.text))
			}
			hasHeader = true
			hdrNetid = f[0] == "Netid"
			hdrState = slices.Contains(f, "State")
			continue
		}
		rows++
		netid, state := hdrNetid, hdrState
		if !hasHeader {
			netid, state = guessSSColumns(f)
		}
		li, ok, err := ssRow(f, l, netid, state)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, li)
		}
	}
	return out, nil
}

func isSSHeader(f []string) bool {
	return slices.Contains(f, "Recv-Q") && slices.Contains(f, "Send-Q")
}

var ssStates = map[string]bool{
	"LISTEN": true, "ESTAB": true, "SYN-SENT": true, "SYN-RECV": true, "FIN-WAIT-1": true,
	"FIN-WAIT-2": true, "TIME-WAIT": true, "UNCONN": true, "CLOSE-WAIT": true, "LAST-ACK": true,
	"CLOSING": true, "CLOSED": true, "UNKNOWN": true, "NEW-SYN-RECV": true, "BOUND-INACTIVE": true,
}

func isSSState(s string) bool { return ssStates[s] }

// guessSSColumns tells, for a header-less row, whether it starts with a
// Netid and/or a State column.
func guessSSColumns(f []string) (netid, state bool) {
	if len(f) == 0 {
		return false, false
	}
	if isNumber(f[0]) {
		return false, false // ss … state listening: no State column
	}
	if len(f) > 1 && isSSState(f[1]) && !isSSState(f[0]) {
		return true, true
	}
	return false, true
}

// splitSSAddr splits "addr:port" at the last colon. The address is kept as
// ss printed it ("0.0.0.0", "[::]", "::", "*", "127.0.0.53%lo").
func splitSSAddr(s string) (string, int, error) {
	k := strings.LastIndexByte(s, ':')
	if k <= 0 || k == len(s)-1 {
		return "", 0, fmt.Errorf("local address %q is not \"address:port\"", s)
	}
	port, err := strconv.Atoi(s[k+1:])
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q in %q is not a number 0-65535 (was ss run without -n?)", s[k+1:], s)
	}
	return s[:k], port, nil
}

// users:(("java",pid=1234,fd=123)) — iproute2 ≥ 3.15/backports — and the
// older users:(("java",1234,123)).
var ssUserRE = regexp.MustCompile(`users:\(\("(.*?)",(?:pid=)?(\d+),(?:fd=)?\d+\)`)

func ssFirstUser(s string) (string, int) {
	m := ssUserRE.FindStringSubmatch(s)
	if m == nil {
		return "", 0
	}
	pid, err := strconv.Atoi(m[2])
	if err != nil {
		return m[1], 0
	}
	return m[1], pid
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ssRow reads one ss row after its Netid and State columns (when
// present): a TCP listener (ok), or a row to skip (another protocol, a
// socket not in LISTEN).
func ssRow(f []string, l numberedLine, netid, state bool) (facts.Listener, bool, error) {
	i := 0
	if netid {
		if len(f) < 1 {
			return facts.Listener{}, false, fmt.Errorf("ss: line %d: expected a Netid column, got %q", l.n, clip(l.text))
		}
		if f[0] != "tcp" {
			return facts.Listener{}, false, nil // udp, u_str, nl, raw…: not a TCP listener
		}
		i++
	}
	if state {
		if len(f) <= i {
			return facts.Listener{}, false, fmt.Errorf("ss: line %d: expected a State column, got %q", l.n, clip(l.text))
		}
		if !isSSState(f[i]) {
			return facts.Listener{}, false, fmt.Errorf("ss: line %d: %q is not a socket state; expected \"State Recv-Q Send-Q Local-Address:Port Peer-Address:Port\" rows from ss -ltn", l.n, f[i])
		}
		if f[i] != "LISTEN" {
			return facts.Listener{}, false, nil
		}
		i++
	}
	if len(f) < i+4 {
		return facts.Listener{}, false, fmt.Errorf("ss: line %d: expected Recv-Q, Send-Q, local and peer address, got %q", l.n, clip(l.text))
	}
	recvq, err1 := strconv.Atoi(f[i])
	sendq, err2 := strconv.Atoi(f[i+1])
	if err1 != nil || err2 != nil || recvq < 0 || sendq < 0 {
		return facts.Listener{}, false, fmt.Errorf("ss: line %d: Recv-Q %q and Send-Q %q must be numbers; expected ss -ltn rows, got %q", l.n, f[i], f[i+1], clip(l.text))
	}
	addr, port, err := splitSSAddr(f[i+2])
	if err != nil {
		return facts.Listener{}, false, fmt.Errorf("ss: line %d: %w", l.n, err)
	}
	li := facts.Listener{Addr: addr, Port: port, Backlog: sendq, Queue: recvq}
	if rest := strings.Join(f[i+4:], " "); rest != "" {
		li.Process, li.PID = ssFirstUser(rest)
	}
	return li, true, nil
}
