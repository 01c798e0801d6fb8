package inventory

import (
	"cmp"
	"strings"

	"github.com/kaudit/kaudit/internal/suggest"
)

// unknownHint suggests the closest known key, or lists them all.
func unknownHint(key string, known []string) string {
	return cmp.Or(suggest.DidYouMean(key, known), "known keys: "+strings.Join(known, ", "))
}
