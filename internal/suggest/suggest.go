// Package suggest finds the known word closest to a mistyped one, for
// "did you mean …?" hints in inventory, waiver and profile errors.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the known word nearest to s (case-insensitive edit
// distance at most 2, or 3 for words longer than 8), or "".
func Closest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := Distance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	limit := 2
	if len(s) > 8 {
		limit = 3
	}
	if bestD <= limit {
		return best
	}
	return ""
}

// DidYouMean is the hint `did you mean "x"?` for the known word closest
// to s, or "".
func DidYouMean(s string, known []string) string {
	if c := Closest(s, known); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return ""
}

// Distance is the Levenshtein distance, with adjacent transpositions
// counting as one edit.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
