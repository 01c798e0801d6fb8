// Package words writes the small phrases every renderer shares: a count
// with its noun, a number with thousands separators, on or off.
package words

import (
	"fmt"
	"strconv"
)

// Count is n with its noun: "1 host", "3 hosts".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Thousands writes n with comma separators: 1840 → "1,840".
func Thousands(n int) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// OnOff is "on" or "off".
func OnOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
