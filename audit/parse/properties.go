package parse

import (
	"strconv"
	"strings"
)

// Properties reads the subset of the Java .properties format that Kafka
// configuration files use: '#' and '!' comment lines, "key=value",
// "key: value" and "key value" separators, leading whitespace, continuation
// lines (a line ending in an odd number of backslashes continues on the next
// line, whose leading whitespace is dropped), CRLF line ends and the usual
// escapes (\t \n \r \f \uXXXX, and a backslash before any other character).
// The last assignment of a key wins. The second map gives, for each key, the
// 1-based line where its winning logical line starts.
func Properties(text string) (map[string]string, map[string]int) {
	values := make(map[string]string)
	lines := make(map[string]int)
	phys := strings.Split(text, "\n")
	for i := 0; i < len(phys); i++ {
		start := i + 1
		line := strings.TrimLeft(strings.TrimSuffix(phys[i], "\r"), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for endsInOddBackslashes(line) && i+1 < len(phys) {
			i++
			next := strings.TrimLeft(strings.TrimSuffix(phys[i], "\r"), " \t\f")
			line = line[:len(line)-1] + next
		}
		if endsInOddBackslashes(line) { // continuation at end of file
			line = line[:len(line)-1]
		}
		key, value := splitProperty(line)
		values[key] = value
		lines[key] = start
	}
	return values, lines
}

func endsInOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line into its unescaped key and value.
func splitProperty(line string) (string, string) {
	k := 0
	for k < len(line) {
		c := line[k]
		if c == '\\' {
			k += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		k++
	}
	k = min(k, len(line))
	key := line[:k]
	rest := strings.TrimLeft(line[k:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return unescapeProperty(key), unescapeProperty(rest)
}

func unescapeProperty(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
