package inventory

import (
	"fmt"
	"strings"
)

// closest returns the known word nearest to s (edit distance at most 2, or
// 3 for long words), or "".
func closest(s string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := distance(strings.ToLower(s), k); d < bestD {
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

// distance is the Levenshtein distance, with adjacent transpositions
// counting as one edit.
func distance(a, b string) int {
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

// unknownHint suggests the closest known key, or lists them all.
func unknownHint(key string, known []string) string {
	if c := closest(key, known); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return "known keys: " + strings.Join(known, ", ")
}
