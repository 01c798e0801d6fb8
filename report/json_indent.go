package report

import (
	"unicode/utf8"

	"github.com/kaudit/kaudit/internal/termsafe"
)

// appendIndented appends compact JSON src (json.Marshal's output: no
// whitespace outside strings) to dst as json.Indent(dst, src, prefix,
// indent) would, in one pass without encoding/json's scanner: a newline,
// prefix and one indent per depth after every '{', '[' and ',' and
// before every '}' and ']', "{}" and "[]" when empty, ": " after a key.
// Inside strings it \u-escapes the runes termsafe.Acts names that the
// encoder left raw (DEL, C1 controls, bidi marks and overrides; the
// encoder escapes C0 controls and U+2028/9 itself); \uXXXX means the same
// rune to any JSON reader. src must be valid JSON.
func appendIndented(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	inStr, esc, open := false, false, false
	newline := func(d int) {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for ; d > 0; d-- {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inStr {
			dst, i, inStr, esc = inString(dst, src, i, esc)
			continue
		}
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			inStr = true
			dst = append(dst, c)
		case '{', '[':
			open = true // the newline waits: an empty one stays {} or []
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline(depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline(depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// inString appends src[i], a byte inside a string (a rune termsafe.Acts
// names \u-escaped, whole), and returns the index of the last byte used
// and whether the string and an escape go on after it.
func inString(dst, src []byte, i int, esc bool) ([]byte, int, bool, bool) {
	c := src[i]
	switch {
	case esc:
		return append(dst, c), i, true, false
	case c == '\\':
		return append(dst, c), i, true, true
	case c == '"':
		return append(dst, c), i, false, false
	case c >= 0x7f:
		r, size := utf8.DecodeRune(src[i:])
		if termsafe.Acts(r) {
			dst = appendUEscape(dst, r)
		} else {
			dst = append(dst, src[i:i+size]...)
		}
		return dst, i + size - 1, true, false
	}
	return append(dst, c), i, true, false
}

// appendUEscape appends \u and r's four lowercase hex digits (r < 0x10000:
// every rune termsafe.Acts names is).
func appendUEscape(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
