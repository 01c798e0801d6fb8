package remote

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
)

// Marker prefixes. Both markers are valid shell words and here-document
// delimiters; the prefix only tells the two framings apart in a trace.
const (
	SectionPrefix = "kaudit-" // the gather script's section markers
	StepPrefix    = "KAUDIT_" // result-line markers and here-doc delimiters
)

var reMarker = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// NewMarker returns prefix followed by 24 random hex digits.
func NewMarker(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + hex.EncodeToString(b[:])
}

// ValidMarker reports whether m may frame a script's output: 8 to 64 of
// [A-Za-z0-9_-], inert in a shell word and in a here-document delimiter.
func ValidMarker(m string) bool { return reMarker.MatchString(m) }

// Quote single-quotes s for POSIX sh: the one quoting of every value that
// reaches a remote shell.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
