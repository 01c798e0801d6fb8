package parse

import (
	"strings"
)

// OSRelease holds the /etc/os-release fields kaudit uses.
type OSRelease struct {
	ID         string // e.g. "ubuntu", "centos", "rhel", "amzn"
	VersionID  string // e.g. "20.04", "7", "8.6", "2"
	IDLike     string // e.g. "rhel fedora"
	PrettyName string // e.g. "CentOS Linux 7 (Core)"
	Name       string // e.g. "CentOS Linux"
}

// ParseOSRelease reads os-release(5) text: KEY=VALUE lines, values unquoted
// or in single or double quotes (with \" \\ \$ \` escapes inside double
// quotes), '#' comments and blank lines. Lines it cannot read are skipped, as
// systemd does; a missing key leaves its field empty. The last assignment of
// a key wins.
func ParseOSRelease(text string) OSRelease {
	var r OSRelease
	for _, l := range nonBlankLines(text) {
		t := strings.TrimSpace(l.text)
		if strings.HasPrefix(t, "#") {
			continue
		}
		key, raw, ok := strings.Cut(t, "=")
		if !ok || !isShellName(key) {
			continue
		}
		val, ok := unquoteOSReleaseValue(raw)
		if !ok {
			continue
		}
		switch key {
		case "ID":
			r.ID = val
		case "VERSION_ID":
			r.VersionID = val
		case "ID_LIKE":
			r.IDLike = val
		case "PRETTY_NAME":
			r.PrettyName = val
		case "NAME":
			r.Name = val
		}
	}
	return r
}

func isShellName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// unquoteOSReleaseValue decodes one os-release value. ok is false for an
// unterminated quote.
func unquoteOSReleaseValue(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", true
	}
	switch raw[0] {
	case '\'':
		end := strings.IndexByte(raw[1:], '\'')
		if end < 0 {
			return "", false
		}
		return raw[1 : 1+end], true
	case '"':
		var b strings.Builder
		for i := 1; i < len(raw); i++ {
			c := raw[i]
			switch {
			case c == '\\' && i+1 < len(raw) && strings.IndexByte("\"\\$`", raw[i+1]) >= 0:
				b.WriteByte(raw[i+1])
				i++
			case c == '"':
				return b.String(), true
			default:
				b.WriteByte(c)
			}
		}
		return "", false
	default:
		// Unquoted: a backslash escapes the next character.
		var b strings.Builder
		for i := 0; i < len(raw); i++ {
			if raw[i] == '\\' && i+1 < len(raw) {
				i++
			}
			b.WriteByte(raw[i])
		}
		return b.String(), true
	}
}
