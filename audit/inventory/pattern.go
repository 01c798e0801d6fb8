package inventory

import (
	"cmp"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// maxExpansion bounds how many hosts one range pattern may produce.
const maxExpansion = 10000

const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// expandHosts expands Ansible host range patterns: "broker[01:03].example.com"
// gives broker01..broker03 (zero padding kept), "node-[a:c]" gives node-a,
// node-b, node-c, "[1:9:2]" takes every second value, "[:3]" starts at 0.
// Several ranges in one name multiply. A bracketed IPv6 literal ("[::1]") is
// not a range. Names without brackets are returned as they are.
func expandHosts(s string) ([]string, error) {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		if strings.IndexByte(s, ']') >= 0 {
			return nil, fmt.Errorf("unbalanced ']' in host pattern %q", s)
		}
		return []string{s}, nil
	}
	j := strings.IndexByte(s[i:], ']')
	if j < 0 {
		return nil, fmt.Errorf("missing ']' in host pattern %q", s)
	}
	j += i
	inner := s[i+1 : j]
	if i == 0 && isIPv6(inner) {
		rest, err := expandHosts(s[j+1:])
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rest))
		for k, r := range rest {
			out[k] = s[:j+1] + r
		}
		return out, nil
	}
	values, err := expandRange(inner)
	if err != nil {
		return nil, fmt.Errorf("host pattern %q: %v", s, err)
	}
	rest, err := expandHosts(s[j+1:])
	if err != nil {
		return nil, err
	}
	if len(values)*len(rest) > maxExpansion {
		return nil, fmt.Errorf("host pattern %q expands to more than %d hosts", s, maxExpansion)
	}
	out := make([]string, 0, len(values)*len(rest))
	for _, v := range values {
		for _, r := range rest {
			out = append(out, s[:i]+v+r)
		}
	}
	return out, nil
}

func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// expandRange expands the inside of one bracket: "beg:end" or "beg:end:step".
func expandRange(r string) ([]string, error) {
	parts := strings.Split(r, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("range [%s] must be [start:end] or [start:end:step]", r)
	}
	beg, end := parts[0], parts[1]
	step := 1
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("range [%s]: step %q must be a positive integer", r, parts[2])
		}
		step = n
	}
	beg = cmp.Or(beg, "0")
	if end == "" {
		return nil, fmt.Errorf("range [%s] has no end", r)
	}
	if len(beg) == 1 && len(end) == 1 && strings.Contains(asciiLetters, beg) && strings.Contains(asciiLetters, end) {
		b, e := strings.Index(asciiLetters, beg), strings.Index(asciiLetters, end)
		if b > e {
			return nil, fmt.Errorf("range [%s] starts after it ends", r)
		}
		var out []string
		for k := b; k <= e; k += step {
			out = append(out, asciiLetters[k:k+1])
		}
		return out, nil
	}
	b, errB := strconv.Atoi(beg)
	e, errE := strconv.Atoi(end)
	if errB != nil || errE != nil || strings.ContainsAny(beg+end, "+-") {
		return nil, fmt.Errorf("range [%s] must be numeric ([01:10]) or single letters ([a:f])", r)
	}
	width := 0
	if len(beg) > 1 && beg[0] == '0' {
		if len(beg) != len(end) {
			return nil, fmt.Errorf("range [%s]: zero-padded start and end must have the same width", r)
		}
		width = len(beg)
	}
	if b > e {
		return nil, fmt.Errorf("range [%s] starts after it ends", r)
	}
	if (e-b)/step+1 > maxExpansion {
		return nil, fmt.Errorf("range [%s] expands to more than %d hosts", r, maxExpansion)
	}
	var out []string
	for k := b; k <= e; k += step {
		out = append(out, fmt.Sprintf("%0*d", width, k))
	}
	return out, nil
}

// ansibleHostKey splits an Ansible host key into the name pattern and an
// optional port ("db1:2222", "[::1]:2222"), as Ansible's parse_address does.
// Colons inside a range bracket and bare IPv6 literals are not ports.
func ansibleHostKey(s string) (pattern string, port int, portStr string) {
	depth, colons, last := 0, 0, -1
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				colons++
				last = i
			}
		}
	}
	if colons != 1 {
		return s, 0, "" // no port, or a bare IPv6 literal
	}
	return s[:last], atoiOrNeg(s[last+1:]), s[last+1:]
}
