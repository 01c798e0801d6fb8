package inventory

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/internal/suggest"
)

func closest(s string, known []string) string { return suggest.Closest(s, known) }

// unknownHint suggests the closest known key, or lists them all.
func unknownHint(key string, known []string) string {
	if c := closest(key, known); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	return "known keys: " + strings.Join(known, ", ")
}
