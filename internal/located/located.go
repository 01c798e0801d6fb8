// Package located is the one error type for a problem at a place in a
// file a user wrote (an inventory, a waiver file, a profile): it names the
// file, the line, the field, what is wrong and, when the user can fix it,
// what to do, rendered "FILE:LINE: FIELD: MSG (hint: HINT)". It is also
// the home of the one hint syntax, "MSG (hint: WHAT TO DO)", for every
// user-facing message (Hint, WithHint), of the one reader of yaml.v3's
// syntax errors (YAMLSyntax) and of the one YAML-node describer for
// "expected X, got Y" (DescribeNode).
package located

import (
	"strconv"
	"strings"
)

// Error is one problem in a user's file.
type Error struct {
	File  string // the path as the user gave it
	Line  int    // 1-based; 0 when the problem is not tied to a line
	Field string // dotted path of the offending key, e.g. "hosts.broker-1.port"; may be empty
	Msg   string // lower case, names the offending value
	Hint  string // what to do about it; may be empty
}

// Error renders "FILE:LINE: FIELD: MSG (hint: HINT)", leaving out the parts
// that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return WithHint(b.String(), e.Hint)
}
