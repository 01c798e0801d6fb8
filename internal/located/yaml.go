package located

import (
	"cmp"
	"strconv"
	"strings"
)

// syntaxHint is what to do about a YAML syntax error when the file's own
// format has nothing more specific to say.
const syntaxHint = "check the indentation and quoting around that line"

// YAMLSyntax is yaml.v3's syntax error err ("yaml: line N: MSG") in data,
// read from file, as an *Error at line N: "invalid YAML: MSG". The hint is
// the format's (syntaxHint when ""), or that indentation takes spaces when
// the line holds a tab.
func YAMLSyntax(file string, data []byte, err error, hint string) *Error {
	line, msg := YAMLLine(err)
	hint = cmp.Or(hint, syntaxHint)
	if lines := strings.Split(string(data), "\n"); line > 0 && line <= len(lines) && strings.Contains(lines[line-1], "\t") {
		hint = "YAML indentation must use spaces, not tabs"
	}
	return &Error{File: file, Line: line, Msg: "invalid YAML: " + msg, Hint: hint}
}

// YAMLLine splits yaml.v3's "yaml: line N: MSG" into N and MSG; 0 and the
// message without "yaml: " when it names no line. This is the one place
// that reads yaml.v3's wording.
func YAMLLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, tail, ok := strings.Cut(rest, ": ")
	n, cerr := strconv.Atoi(num)
	if !ok || cerr != nil || n <= 0 {
		return 0, msg
	}
	return n, tail
}
