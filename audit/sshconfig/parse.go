package sshconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// directive is one non-empty, non-comment line of a configuration file.
type directive struct {
	file string
	line int
	key  string // lowercase keyword
	args []string
}

func (d directive) where() string { return fmt.Sprintf("%s:%d", d.file, d.line) }

// maxFileSize bounds one configuration file.
const maxFileSize = 4 << 20

// parseFile splits data into directives. Like OpenSSH, the keyword is
// separated from its arguments by whitespace or one "=", arguments may be
// quoted with " or ', a backslash escapes the next quote, backslash or
// blank, and a "#" at the start of an argument ends the line.
func parseFile(name string, data []byte) ([]directive, error) {
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d MiB: not an ssh_config file", name, maxFileSize>>20)
	}
	var out []directive
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxFileSize)
	for n := 1; sc.Scan(); n++ {
		key, rest := splitKeyword(sc.Text())
		if key == "" || strings.HasPrefix(key, "#") {
			continue
		}
		args, err := splitArgs(rest)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%s:%d: no argument after keyword %q", name, n, key)
		}
		out = append(out, directive{file: name, line: n, key: strings.ToLower(key), args: args})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

const blanks = " \t\r\f\v"

// splitKeyword returns the keyword and the rest of the line (OpenSSH's
// strdelim: whitespace, or one "=" with optional whitespace around it).
func splitKeyword(line string) (string, string) {
	line = strings.TrimLeft(line, blanks)
	i := strings.IndexAny(line, blanks+"=")
	if i < 0 {
		return line, ""
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], blanks)
	if strings.HasPrefix(rest, "=") {
		rest = strings.TrimLeft(rest[1:], blanks)
	}
	return key, rest
}

// splitArgs is OpenSSH's argv_split with comments terminating the line.
func splitArgs(s string) ([]string, error) {
	var args []string
	for {
		s = strings.TrimLeft(s, blanks)
		if s == "" || s[0] == '#' {
			return args, nil
		}
		var arg strings.Builder
		var quote byte
		i := 0
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && i+1 < len(s) && strings.IndexByte("\"'\\ \t", s[i+1]) >= 0 && (quote == 0 || s[i+1] == quote || s[i+1] == '\\'):
				i++
				arg.WriteByte(s[i])
				continue
			case quote != 0 && c == quote:
				quote = 0
				continue
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
				continue
			case quote == 0 && strings.IndexByte(blanks, c) >= 0:
			default:
				arg.WriteByte(c)
				continue
			}
			break
		}
		if quote != 0 {
			return nil, fmt.Errorf("unterminated quote")
		}
		args = append(args, arg.String())
		s = s[i:]
	}
}
