package parse

import (
	"fmt"
	"strconv"
	"strings"
)

// Netstat parses /proc/net/netstat (and /proc/net/snmp, which has the same
// shape): pairs of lines "Prefix: Name1 Name2 …" / "Prefix: v1 v2 …". It
// returns prefix → counter name → value, matched by header name and never by
// position, because older kernels print fewer columns.
//
// A header without its value line, a value line whose prefix differs from the
// header's, a different number of names and values, or a value that is not a
// decimal integer is an error naming the prefix.
func Netstat(text string) (map[string]map[string]int64, error) {
	lines := nonBlankLines(text)
	if len(lines) == 0 {
		return nil, fmt.Errorf("netstat: empty input, expected pairs of \"Prefix: names\" / \"Prefix: values\" lines")
	}
	out := make(map[string]map[string]int64)
	for i := 0; i < len(lines); i += 2 {
		hp, names, err := splitPrefixed(lines[i].text)
		if err != nil {
			return nil, fmt.Errorf("netstat: line %d: %w", lines[i].n, err)
		}
		for _, name := range names {
			if !isCounterName(name) {
				return nil, fmt.Errorf("netstat: line %d: expected \"Prefix: CounterName …\", got %q", lines[i].n, clip(lines[i].text))
			}
		}
		if i+1 >= len(lines) {
			return nil, fmt.Errorf("netstat: %s: header on line %d has no value line after it", hp, lines[i].n)
		}
		vp, values, err := splitPrefixed(lines[i+1].text)
		if err != nil {
			return nil, fmt.Errorf("netstat: %s: line %d: %w", hp, lines[i+1].n, err)
		}
		if vp != hp {
			return nil, fmt.Errorf("netstat: %s: header on line %d is followed by %q values on line %d, expected %q values", hp, lines[i].n, vp, lines[i+1].n, hp)
		}
		if len(names) != len(values) {
			return nil, fmt.Errorf("netstat: %s: %d names on line %d but %d values on line %d", hp, len(names), lines[i].n, len(values), lines[i+1].n)
		}
		m := out[hp]
		if m == nil {
			m = make(map[string]int64, len(names))
			out[hp] = m
		}
		for j, name := range names {
			v, err := strconv.ParseInt(values[j], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("netstat: %s: value %q for %s (line %d) is not a decimal integer", hp, values[j], name, lines[i+1].n)
			}
			m[name] = v
		}
	}
	return out, nil
}

func isCounterName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// splitPrefixed splits "Prefix: a b c" into "Prefix" and its fields.
func splitPrefixed(line string) (string, []string, error) {
	prefix, rest, ok := strings.Cut(line, ":")
	prefix = strings.TrimSpace(prefix)
	if !ok || prefix == "" || strings.ContainsAny(prefix, " \t") {
		return "", nil, fmt.Errorf("expected \"Prefix: fields…\", got %q", clip(line))
	}
	return prefix, strings.Fields(rest), nil
}

type numberedLine struct {
	n    int // 1-based
	text string
}

// nonBlankLines splits text into lines (accepting CRLF) and drops blank ones,
// keeping each line's 1-based number.
func nonBlankLines(text string) []numberedLine {
	var out []numberedLine
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, numberedLine{n: i + 1, text: l})
	}
	return out
}

// clip shortens s for error messages.
func clip(s string) string {
	s = strings.TrimSpace(s)
	const max = 80
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
