// Package props edits a Kafka server.properties file the way a careful
// human would: it changes the values it is asked to change and keeps every
// other byte (comments, blank lines, order, separators, whitespace, line
// endings) exactly as it was.
//
// The file is read with java.util.Properties semantics, because that is how
// the broker reads it (Utils.loadProps → Properties.load): logical lines
// joined by a trailing odd backslash, comment lines starting with '#' or
// '!', a key ended by the first unescaped '=', ':' or whitespace, and the
// last assignment of a key winning. Set never rewrites what it does not
// understand: after editing it parses its own output again and fails if the
// effective values are not exactly the ones asked for.
package props

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Edit describes one change Set made.
type Edit struct {
	Key string
	// Old is the effective value before the edit, unescaped, continuation
	// lines joined, trailing whitespace removed (Kafka trims values).
	// Empty when Appended.
	Old string
	New string
	// Line is the 1-based physical line where the assignment starts
	// (for an appended key: the line it was appended on).
	Line     int
	Appended bool
}

// Option changes how Set appends missing keys.
type Option func(*options)

type options struct {
	comment string
}

// AppendComment makes Set write "# text" on its own line before the keys it
// appends at the end of the file (one comment for all appended keys). It has
// no effect when nothing is appended. Without it, Set appends bare
// "key=value" lines.
func AppendComment(text string) Option {
	return func(o *options) { o.comment = text }
}

// Entry is one effective assignment in a properties file.
type Entry struct {
	Key   string
	Value string // unescaped, trailing whitespace removed
	Line  int    // 1-based physical line where the assignment starts
}

// Parse returns the effective assignment of every key (the last one in the
// file), the way Properties.load reads them.
func Parse(src []byte) (map[string]Entry, error) {
	lines, err := scan(src)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Entry, len(lines))
	for _, l := range lines {
		out[l.key] = Entry{Key: l.key, Value: trimValue(l.value), Line: l.line}
	}
	return out, nil
}

// Set applies changes (key → new value) to src and returns the new file
// and the edits made, sorted by key.
//
// The last assignment of each key is edited in place: only the value bytes
// change, the separator and the whitespace around it are kept, and a value
// spread over continuation lines is replaced as a whole (the continuation
// lines disappear). A key that is not in the file is appended at the end,
// "key=value" with the file's line ending (a line ending is added first when
// the file does not end with one). A key already set to the requested value
// is left alone and produces no Edit.
//
// Keys and values that would need escaping in the properties format
// (backslash, line breaks, other control or non-ASCII characters, leading
// whitespace in a value, and '=', ':', '#', '!' or whitespace in a key)
// are rejected: kaudit never writes an escape sequence.
func Set(src []byte, changes map[string]string, opts ...Option) (out []byte, edits []Edit, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if strings.ContainsAny(o.comment, "\r\n") {
		return nil, nil, fmt.Errorf("append comment %q: contains a line break", o.comment)
	}
	keys, err := checkChanges(changes)
	if err != nil {
		return nil, nil, err
	}
	lines, err := scan(src)
	if err != nil {
		return nil, nil, err
	}
	out, edits, missing := editInPlace(src, lines, keys, changes)
	if len(missing) > 0 {
		out, edits, err = appendKeys(out, missing, changes, o.comment, edits)
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Key < edits[j].Key })
	if err := selfCheck(src, out, changes, len(missing)); err != nil {
		return nil, nil, err
	}
	return out, edits, nil
}

// checkChanges validates every key and value and returns the keys sorted.
func checkChanges(changes map[string]string) ([]string, error) {
	keys := make([]string, 0, len(changes))
	for k, v := range changes {
		if err := Check(k, v); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// editInPlace replaces the value of the last assignment of each key that
// is in the file and differs; missing are the keys that are not there.
func editInPlace(src []byte, lines []logical, keys []string, changes map[string]string) (out []byte, edits []Edit, missing []string) {
	last := make(map[string]logical, len(lines))
	for _, l := range lines {
		last[l.key] = l
	}
	// Applied from the end of the file backwards so that earlier offsets
	// stay valid.
	type span struct {
		start, end int
		val        string
	}
	var spans []span
	for _, k := range keys {
		l, ok := last[k]
		if !ok {
			missing = append(missing, k)
			continue
		}
		old := trimValue(l.value)
		if old == changes[k] {
			continue
		}
		v := changes[k]
		if l.needSep {
			v = "=" + v
		}
		spans = append(spans, span{l.valStart, l.valEnd, v})
		edits = append(edits, Edit{Key: k, Old: old, New: changes[k], Line: l.line})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	out = append([]byte(nil), src...)
	for _, s := range spans {
		tail := append([]byte(s.val), out[s.end:]...)
		out = append(out[:s.start], tail...)
	}
	return out, edits, missing
}

// selfCheck: the result must read back with exactly the requested values
// and every other key unchanged.
func selfCheck(src, out []byte, changes map[string]string, appended int) error {
	before, err := Parse(src)
	if err != nil {
		return err
	}
	after, err := Parse(out)
	if err != nil {
		return fmt.Errorf("kaudit bug: edited file does not parse: %w", err)
	}
	for k, e := range before {
		if _, changed := changes[k]; changed {
			continue
		}
		a, ok := after[k]
		if !ok {
			return fmt.Errorf("editing would remove %s (line %d, value %q) from the file; refusing", k, e.Line, e.Value)
		}
		if a.Value != e.Value {
			return fmt.Errorf("editing would change %s (line %d) from %q to %q; refusing", k, e.Line, e.Value, a.Value)
		}
	}
	for k, v := range changes {
		a, ok := after[k]
		if !ok {
			return fmt.Errorf("editing %s: the file would not read it back at all (want %q); refusing", k, v)
		}
		if a.Value != v {
			return fmt.Errorf("editing %s: the file would read back %q instead of %q; refusing", k, a.Value, v)
		}
	}
	if len(after) != len(before)+appended {
		return fmt.Errorf("kaudit bug: edited file has %d keys, want %d", len(after), len(before)+appended)
	}
	return nil
}

func appendKeys(out []byte, missing []string, changes map[string]string, comment string, edits []Edit) ([]byte, []Edit, error) {
	eol := lineEnding(out)
	// A file ending in a continuation (odd backslash on the last line)
	// would swallow the first appended line; an empty line ends it
	// without changing its value.
	lines, err := scan(out)
	if err != nil {
		return nil, nil, err
	}
	if len(out) > 0 && !endsWithEOL(out) {
		out = append(out, eol...)
	}
	if len(lines) > 0 && lines[len(lines)-1].openAtEOF {
		// After a lone CR, a "\n" would join it into one CRLF
		// terminator and the empty line would not be there: end it
		// with a CR as the file's last line is.
		if out[len(out)-1] == '\r' && eol[0] == '\n' {
			out = append(out, '\r')
		} else {
			out = append(out, eol...)
		}
	}
	line := countLines(out) + 1
	if comment != "" {
		out = append(out, "# "+comment+eol...)
		line++
	}
	for _, k := range missing {
		out = append(out, k+"="+changes[k]+eol...)
		edits = append(edits, Edit{Key: k, New: changes[k], Line: line, Appended: true})
		line++
	}
	return out, edits, nil
}

// Check reports whether Set would accept key=value (see Set for the rules).
func Check(key, value string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return checkValue(key, value)
}

func checkKey(k string) error {
	if k == "" {
		return fmt.Errorf("empty property key")
	}
	if k[0] == '#' || k[0] == '!' {
		return fmt.Errorf("property key %q: starts with %q, which makes a comment", k, k[0])
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '\\' || c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f':
			return fmt.Errorf("property key %q: %q would need escaping; kaudit does not write escapes", k, c)
		case c < 0x20 || c >= 0x7f:
			return fmt.Errorf("property key %q: control or non-ASCII byte 0x%02x", k, c)
		}
	}
	return nil
}

func checkValue(k, v string) error {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			return fmt.Errorf("value for %s: contains a backslash, which would need escaping; kaudit does not write escapes", k)
		case c == '\n' || c == '\r':
			return fmt.Errorf("value for %s: contains a line break", k)
		case c == '\t' || c == '\f':
			return fmt.Errorf("value for %s: contains a tab or form feed", k)
		case c < 0x20 || c >= 0x7f:
			return fmt.Errorf("value for %s: control or non-ASCII byte 0x%02x (the broker reads the file as ISO-8859-1)", k, c)
		}
	}
	if strings.HasPrefix(v, " ") {
		return fmt.Errorf("value for %s: leading whitespace would be dropped by the broker", k)
	}
	if strings.HasSuffix(v, " ") {
		return fmt.Errorf("value for %s: trailing whitespace would be trimmed by the broker", k)
	}
	return nil
}

// logical is one key/value logical line, with offsets into the source.
type logical struct {
	key   string
	value string // unescaped, untrimmed
	line  int    // 1-based physical line of the first character
	end   int    // offset just past the last physical line (terminator included)
	// valStart and valEnd delimit the bytes a new value replaces. On a
	// single physical line valEnd stops after the last non-whitespace
	// value byte (trailing whitespace is kept); across continuation lines
	// it is the end of the last physical line's content (before its line
	// ending), so the whole value goes.
	valStart, valEnd int
	// needSep: the key runs to the end of the line ("key" alone), so a
	// new value needs a separator in front of it.
	needSep bool
	// openAtEOF: the file ends while this line is still continued.
	openAtEOF bool
	// valIdx is where the value starts in the joined line (scan only).
	valIdx int
}

type physical struct {
	start, contentEnd, end int // end includes the line terminator
}

func splitPhysical(src []byte) []physical {
	var out []physical
	start := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			out = append(out, physical{start, i, i + 1})
			start = i + 1
		case '\r':
			end := i + 1
			if end < len(src) && src[end] == '\n' {
				end++
			}
			out = append(out, physical{start, i, end})
			start = end
			i = end - 1
		}
	}
	if start < len(src) {
		out = append(out, physical{start, len(src), len(src)})
	}
	return out
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// scan reads src as Properties.load does and returns every key/value
// logical line in file order.
func scan(src []byte) ([]logical, error) {
	phys := splitPhysical(src)
	var out []logical
	for i := 0; i < len(phys); i++ {
		p := phys[i]
		s := p.start
		for s < p.contentEnd && isWS(src[s]) {
			s++
		}
		if s == p.contentEnd {
			continue // blank line
		}
		if src[s] == '#' || src[s] == '!' {
			continue // comment lines never continue
		}
		first := i
		j := join(src, phys, i, s)
		i = j.lastPhys
		if len(j.buf) == 0 {
			continue // only continuation backslashes: Properties.load skips it
		}
		l, err := parseLogical(j, first)
		if err != nil {
			return nil, err
		}
		l.end, l.openAtEOF = phys[j.lastPhys].end, j.open
		l.valStart, l.valEnd = j.valueSpan(phys, first, l.valIdx)
		out = append(out, l)
	}
	return out, nil
}

// joined is one logical line: its raw bytes (escapes kept), each byte's
// offset in the source, its last physical line, and whether the file
// ended while it was still continued.
type joined struct {
	buf      []byte
	pos      []int
	lastPhys int
	open     bool
}

// join builds the logical line that starts at physical line i, offset from.
func join(src []byte, phys []physical, i, from int) joined {
	j := joined{lastPhys: i}
	for {
		q := phys[j.lastPhys]
		seg := src[from:q.contentEnd]
		bs := 0
		for k := len(seg) - 1; k >= 0 && seg[k] == '\\'; k-- {
			bs++
		}
		cont := bs%2 == 1
		n := len(seg)
		if cont {
			n-- // the continuation backslash is not part of the line
		}
		for k := 0; k < n; k++ {
			j.buf = append(j.buf, seg[k])
			j.pos = append(j.pos, from+k)
		}
		if !cont {
			return j
		}
		if j.lastPhys+1 >= len(phys) {
			j.open = true
			return j
		}
		j.lastPhys++
		from = phys[j.lastPhys].start
		for from < phys[j.lastPhys].contentEnd && isWS(src[from]) {
			from++
		}
	}
}

// parseLogical splits a logical line into its key (up to the first
// unescaped '=', ':' or whitespace) and value, both unescaped. first is
// the index of its first physical line.
func parseLogical(j joined, first int) (logical, error) {
	buf := j.buf
	keyLen, valStart, hasSep, esc := 0, len(buf), false, false
	for keyLen < len(buf) {
		c := buf[keyLen]
		if !esc && (c == '=' || c == ':') {
			valStart, hasSep = keyLen+1, true
			break
		}
		if !esc && isWS(c) {
			valStart = keyLen + 1
			break
		}
		if c == '\\' {
			esc = !esc
		} else {
			esc = false
		}
		keyLen++
	}
	for valStart < len(buf) {
		c := buf[valStart]
		if !isWS(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valStart++
	}
	key, err := unescape(buf[:keyLen])
	if err != nil {
		return logical{}, fmt.Errorf("line %d: %w", first+1, err)
	}
	val, err := unescape(buf[valStart:])
	if err != nil {
		return logical{}, fmt.Errorf("line %d: %w", first+1, err)
	}
	return logical{key: key, value: val, line: first + 1, needSep: keyLen == len(buf), valIdx: valStart}, nil
}

// valueSpan is where a new value goes (logical.valStart, valEnd); valIdx
// is the index in j.buf where the value starts.
func (j joined) valueSpan(phys []physical, first, valIdx int) (start, end int) {
	if j.lastPhys > first {
		// Across continuation lines the whole value goes, from just
		// after the separator (and the whitespace that follows it on
		// its line) to the end of the last physical line.
		return j.pos[valIdx-1] + 1, phys[j.lastPhys].contentEnd
	}
	if valIdx < len(j.buf) {
		start = j.pos[valIdx]
	} else {
		start = j.pos[len(j.pos)-1] + 1
	}
	e := len(j.buf)
	for e > valIdx && isWS(j.buf[e-1]) {
		e--
	}
	if e > valIdx {
		return start, j.pos[e-1] + 1
	}
	return start, start
}

// unescape applies Properties.loadConvert: \t \n \r \f, \uXXXX, and
// "\x" → "x" for any other x. A lone trailing backslash is dropped.
func unescape(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b), nil
	}
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(b) {
			break
		}
		switch c = b[i]; c {
		case 't':
			sb.WriteByte('\t')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			if i+5 > len(b) {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			var r rune
			for _, h := range b[i+1 : i+5] {
				r <<= 4
				switch {
				case h >= '0' && h <= '9':
					r |= rune(h - '0')
				case h >= 'a' && h <= 'f':
					r |= rune(h-'a') + 10
				case h >= 'A' && h <= 'F':
					r |= rune(h-'A') + 10
				default:
					return "", fmt.Errorf("malformed \\uxxxx encoding")
				}
			}
			sb.WriteRune(r)
			i += 4
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), nil
}

func trimValue(v string) string { return strings.TrimRight(v, " \t\f") }

// lineEnding returns the file's first line terminator, "\n" when it has none.
func lineEnding(b []byte) string {
	for i, c := range b {
		switch c {
		case '\n':
			return "\n"
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				return "\r\n"
			}
			return "\r"
		}
	}
	return "\n"
}

func endsWithEOL(b []byte) bool {
	return len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r')
}

func countLines(b []byte) int { return len(splitPhysical(b)) }
