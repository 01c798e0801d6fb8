package inventory

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem found in an inventory file. Load and Parse return all
// problems of a file at once, joined with errors.Join in line order; use
// Errors to get them back as a slice.
type Error struct {
	File  string // the inventory path as given to Load or Parse
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
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Errors unpacks an error returned by Load or Parse into its *Error values,
// in line order. Errors that are not *Error are skipped.
func Errors(err error) []*Error {
	if err == nil {
		return nil
	}
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if e, ok := err.(*Error); ok {
			out = append(out, e)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var e *Error
		if errors.As(err, &e) {
			out = append(out, e)
		}
	}
	walk(err)
	return out
}

// collector gathers the errors of one file.
type collector struct {
	file  string
	errs  []*Error
	seen  map[string]bool
	warns []string // what loads but is suspect, for Inventory.Warnings
}

func (c *collector) warn(msg string) { c.warns = append(c.warns, msg) }

func (c *collector) add(line int, field, hint, format string, args ...any) {
	e := &Error{File: c.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Hint: hint}
	key := e.Error()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[key] { // a value shared by several hosts is reported once
		return
	}
	c.seen[key] = true
	c.errs = append(c.errs, e)
}

// err returns the collected errors joined, in line order, or nil.
func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	sort.SliceStable(c.errs, func(i, j int) bool { // the inventory first, then vars files by name
		a, b := c.errs[i], c.errs[j]
		if a.File != b.File {
			return a.File == c.file || (b.File != c.file && a.File < b.File)
		}
		return a.Line < b.Line
	})
	errs := make([]error, len(c.errs))
	for i, e := range c.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error into an *Error with its line.
func yamlError(file string, data []byte, err error) *Error {
	msg := err.Error()
	e := &Error{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: "),
		Hint: "check the indentation and quoting around that line"}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "invalid YAML: " + m[2]
		if lines := strings.Split(string(data), "\n"); e.Line <= len(lines) && strings.Contains(lines[e.Line-1], "\t") {
			e.Hint = "YAML indentation must use spaces, not tabs"
		}
	}
	return e
}
