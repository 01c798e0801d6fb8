// Package assume parses the planned versions of a pre-upgrade what-if
// (--assume-kafka, and assume_kafka in the inventory), so the flag and the
// inventory accept exactly the same values.
package assume

import "strings"

// Problem kinds of a ParseError.
const (
	BadDistribution = "distribution" // a prefix other than apache: or confluent:
	BadVersion      = "version"      // not 2 to 4 dot-separated runs of digits
	Duplicate       = "duplicate"    // two versions for one distribution
)

// ParseError says which item of the list is wrong and how.
type ParseError struct {
	Kind string
	Item string // the offending comma-separated item
	Dist string // its distribution (for Duplicate) or prefix (for BadDistribution)
}

func (e *ParseError) Error() string { return e.Kind + ": " + e.Item }

// Kafka reads "3.6.1", "apache:3.6.1", "confluent:7.6.0" or a
// comma-separated mix (one per distribution); an unprefixed version is
// Apache Kafka. It returns distribution → version.
func Kafka(s string) (map[string]string, *ParseError) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		dist, ver := "apache", item
		if i := strings.IndexByte(item, ':'); i >= 0 {
			dist, ver = strings.ToLower(item[:i]), item[i+1:]
			if dist != "apache" && dist != "confluent" {
				return nil, &ParseError{Kind: BadDistribution, Item: item, Dist: item[:i]}
			}
		}
		if !Version(ver) {
			return nil, &ParseError{Kind: BadVersion, Item: item}
		}
		if _, dup := out[dist]; dup {
			return nil, &ParseError{Kind: Duplicate, Item: item, Dist: dist}
		}
		out[dist] = ver
	}
	return out, nil
}

// Version reports whether v is 2 to 4 dot-separated runs of at most 9 digits.
func Version(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
