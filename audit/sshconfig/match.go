package sshconfig

import "strings"

// matchPattern is OpenSSH's match_pattern: "*" matches any run of
// characters, "?" exactly one; everything else literally, case-sensitive.
func matchPattern(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			p = strings.TrimLeft(p, "*")
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchPattern(s[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
		}
		s, p = s[1:], p[1:]
	}
	return s == ""
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
