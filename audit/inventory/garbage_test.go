package inventory

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// garbage is n bytes of seeded random printable text (about one newline
// in 30 bytes), or of random bytes.
func garbage(n int, binary bool) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		switch {
		case binary:
			b[i] = byte(r.UintN(256))
		case r.UintN(30) == 0:
			b[i] = '\n'
		default:
			b[i] = byte(' ' + r.UintN(95))
		}
	}
	return b
}

// TestGarbageInventoryBounded: a file that is no inventory (5 MB of text
// or of binary, one 5 MB line) gives MaxErrors problems and a count of the
// rest, not one line per line of it: a screenful, found quickly.
func TestGarbageInventoryBounded(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		last *regexp.Regexp // the last line of the error
	}{
		{"text", garbage(5<<20, false), regexp.MustCompile(`^… and 9,980 more problems in \S+/inv, where reading stopped at line [0-9,]+: is it an inventory\? \(the first 20 problems are listed\)$`)},
		{"binary", garbage(5<<20, true), regexp.MustCompile(`^… and 9,980 more problems in \S+/inv, where reading stopped at line [0-9,]+: is it an inventory\? \(the first 20 problems are listed\)$`)},
		{"one long line", []byte(strings.Repeat("a", 5<<20)), regexp.MustCompile(`^\S+/inv:1: line is 5,242,880 bytes long \(at most 65,536\): is it an inventory\? \(hint: an inventory line holds a host or a group and its variables\)$`)},
		// fewer than stopAfter problems: every one is counted.
		{"500 bad hosts", []byte(strings.Repeat("[g]\nh ansible_port=0\nx!y\n", 250)), regexp.MustCompile(`^… and 480 more problems in \S+/inv \(the first 20 are listed\)$`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "inv")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			inv, err := Load(path)
			if err == nil {
				t.Fatalf("loaded: %d hosts", len(inv.Hosts))
			}
			msg := err.Error()
			lines := strings.Split(msg, "\n")
			if last := lines[len(lines)-1]; !tc.last.MatchString(last) {
				t.Errorf("last line %q does not match %s", last, tc.last)
			}
			if n := len(Errors(err)); n > MaxErrors || len(lines) > MaxErrors+1 {
				t.Errorf("%d problems listed in %d lines, want at most %d", n, len(lines), MaxErrors)
			}
			if len(msg) > 16<<10 {
				t.Errorf("error is %d bytes, want < 16 KiB", len(msg))
			}
			t.Logf("%d bytes, %d lines", len(msg), len(lines))
		})
	}
}
