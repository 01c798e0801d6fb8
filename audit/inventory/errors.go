package inventory

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"unicode/utf8"

	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/words"
)

// Error is one problem found in an inventory file (internal/located's
// type, shared with waiver and profile files). Load and Parse return all
// problems of a file at once, joined with errors.Join in line order.
type Error = located.Error

// MaxErrors is how many problems of one inventory Load and Parse list;
// the rest are counted in a last line "… and N more problems", so that a
// file that is no inventory at all (a log, a binary) costs a screenful
// and bounded memory, not one line per line of it.
const MaxErrors = 20

// maxLine bounds a line of an INI inventory, in bytes.
const maxLine = 64 << 10

// maxMsg bounds a problem's message (which may quote a whole line of
// garbage), in bytes.
const maxMsg = 240

// collector gathers the errors of one file: the first MaxErrors, and a
// count of the other distinct ones.
type collector struct {
	file string
	errs []*Error
	seen map[uint64]bool // hashes of the problems found, listed or not
	more int             // distinct problems beyond MaxErrors
	// stoppedAt is the line a parser stopped reading at, having found
	// stopAfter problems (tooMany): the file is no inventory.
	stoppedAt int
	warns     []string // what loads but is suspect, for Inventory.Warnings
}

func (c *collector) warn(msg string) { c.warns = append(c.warns, msg) }

func (c *collector) add(line int, field, hint, format string, args ...any) {
	e := &Error{File: c.file, Line: line, Field: clipMsg(field), Msg: clipMsg(fmt.Sprintf(format, args...)), Hint: hint}
	h := fnv.New64a()
	h.Write([]byte(e.Error()))
	key := h.Sum64()
	if c.seen == nil {
		c.seen = map[uint64]bool{}
	}
	if c.seen[key] { // a value shared by several hosts is reported once
		return
	}
	c.seen[key] = true
	c.keep(e)
}

// keep lists e, or counts it once MaxErrors are listed.
func (c *collector) keep(e *Error) {
	if len(c.errs) >= MaxErrors {
		c.more++
		return
	}
	c.errs = append(c.errs, e)
}

// absorb takes the problems of a vars file's collector.
func (c *collector) absorb(sub *collector) {
	for _, e := range sub.errs {
		c.keep(e)
	}
	c.more += sub.more
}

// stopAfter is how many problems a parser finds before it stops reading
// (where it can: the INI parser, line by line).
const stopAfter = 10_000

// tooMany reports whether stopAfter problems were found.
func (c *collector) tooMany() bool { return len(c.errs)+c.more >= stopAfter }

// failed reports whether a problem was found.
func (c *collector) failed() bool { return len(c.errs) > 0 }

// clipMsg cuts a message longer than maxMsg bytes at a rune boundary,
// with "…".
func clipMsg(s string) string {
	if len(s) <= maxMsg {
		return s
	}
	cut := maxMsg
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
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
	errs := make([]error, len(c.errs), len(c.errs)+1)
	for i, e := range c.errs {
		errs[i] = e
	}
	switch {
	case c.stoppedAt > 0:
		errs = append(errs, fmt.Errorf("… and %s more problems in %s, where reading stopped at line %s: is it an inventory? (the first %d problems are listed)", words.Thousands(c.more), c.file, words.Thousands(c.stoppedAt), MaxErrors))
	case c.more > 0:
		errs = append(errs, fmt.Errorf("… and %s more problems in %s (the first %d are listed)", words.Thousands(c.more), c.file, MaxErrors))
	}
	return errors.Join(errs...)
}
