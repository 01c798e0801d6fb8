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

// QuoteWord is Quote for a command shown to a person: a word of only
// [A-Za-z0-9_./:@=-] is left bare (it means the same quoted or not).
func QuoteWord(s string) string {
	if reBareWord.MatchString(s) {
		return s
	}
	return Quote(s)
}

var reBareWord = regexp.MustCompile(`^[A-Za-z0-9_./:@=-]+$`)

// ScriptVar is the value of a line NAME='VALUE' of a script (how every
// kaudit script is given its marker, M, and its other parameters), or
// false when the script sets no such single-quoted value.
// The value is returned as quoted: Quote's '\” sequences are not undone.
func ScriptVar(script []byte, name string) (string, bool) {
	prefix := name + "='"
	for _, line := range strings.Split(string(script), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok && strings.HasSuffix(v, "'") && !strings.Contains(v[:len(v)-1], "'") {
			return v[:len(v)-1], true
		}
	}
	return "", false
}

// ScriptMarker is the marker a script declares (M='MARKER'), or false when
// it declares none or one ValidMarker rejects: what a host (a simulated one,
// a test double) reads to frame its answer.
func ScriptMarker(script []byte) (string, bool) {
	if m, ok := ScriptVar(script, "M"); ok && ValidMarker(m) {
		return m, true
	}
	return "", false
}
