package gather

import (
	"bytes"
	"fmt"
	"strings"
)

// Section is one framed part of the script's output.
type Section struct {
	Name  string
	State string // ok, missing, denied, absent, error
	Body  string
}

// Split cuts the script's output into sections. Text outside sections (a
// login banner, shell noise) is ignored. Output without the final "done"
// line is truncated: Split says after which section.
func Split(out []byte, marker string) (map[string]Section, error) {
	secs := map[string]Section{}
	begin := []byte(marker + " begin ")
	end := []byte(marker + " end ")
	done := []byte(marker + " done")
	var cur string
	var body bytes.Buffer
	var last string
	finished := false
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		switch {
		case bytes.HasPrefix(line, begin):
			cur = strings.TrimSpace(string(line[len(begin):]))
			body.Reset()
		case bytes.HasPrefix(line, end):
			f := strings.Fields(string(line[len(end):]))
			if len(f) < 1 || f[0] != cur {
				return nil, fmt.Errorf("gather output malformed: end of section %q without its beginning", strings.Join(f, " "))
			}
			st := "ok"
			if len(f) > 1 {
				st = f[1]
			}
			b := body.String()
			b = strings.TrimSuffix(b, "\n") // the newline printed before the end marker
			secs[cur] = Section{Name: cur, State: st, Body: b}
			last, cur = cur, ""
		case bytes.Equal(bytes.TrimRight(line, "\r"), done):
			finished = true
		case cur != "":
			body.Write(line)
			body.WriteByte('\n')
		}
	}
	if len(secs) == 0 {
		return nil, fmt.Errorf("gather output not understood: no kaudit sections (did the remote shell run /bin/sh -s? a forced command or a restricted shell prints something else)")
	}
	if !finished {
		if cur != "" {
			return secs, fmt.Errorf("gather output truncated inside section %q", cur)
		}
		return secs, fmt.Errorf("gather output truncated after section %q", last)
	}
	return secs, nil
}
