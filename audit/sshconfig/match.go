package sshconfig

import "strings"

// matchPattern is OpenSSH's match_pattern: "*" matches any run of
// characters, "?" exactly one; everything else literally, case-sensitive.
// Linear backtracking to the last "*", so no pattern can take exponential
// time.
func matchPattern(s, p string) bool {
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si, pi = si+1, pi+1
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			si, pi = mark, star+1
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchList is OpenSSH's match_pattern_list: a comma-separated list of
// patterns, each optionally negated with "!". It is true when a positive
// pattern matches and no negated one does. fold lowercases both sides
// (host names), as OpenSSH does for Match host and originalhost.
func matchList(s, list string, fold bool) bool {
	if fold {
		s, list = strings.ToLower(s), strings.ToLower(list)
	}
	got := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(s, p) {
			if neg {
				return false
			}
			got = true
		}
	}
	return got
}

// matchHostLine is a Host line: whitespace-separated patterns; a matching
// negated pattern rejects the block whatever else matches.
func matchHostLine(host string, patterns []string) bool {
	got := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(host, p) {
			if neg {
				return false
			}
			got = true
		}
	}
	return got
}
