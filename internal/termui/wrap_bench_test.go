package termui

import (
	"strings"
	"testing"
)

// BenchmarkWrapLongValue wraps one value of 200 KB and of 1 MB (a hostile
// cluster id, a host's config value) at 80 columns: linear in the value's
// size (issue 34 row 7: it re-measured the remainder after every cut).
func BenchmarkWrapLongValue(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"200KB", 200 << 10}, {"1MB", 1 << 20}} {
		word := "cluster " + strings.Repeat("A", size.n) + " end"
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(word)))
			for i := 0; i < b.N; i++ {
				if lines := Wrap(word, 80, 4); len(lines) < size.n/80 {
					b.Fatalf("%d lines", len(lines))
				}
			}
		})
	}
}
