package remote

import (
	"bytes"
	"fmt"
	"strings"
)

// Section is one framed part of a script's output.
type Section struct {
	Name  string
	State State
	Body  string
}

// State is what a section's end line says of it: StateOK (also an end
// line without a state), or how the script could not read it. The states
// a report keeps are facts.SectionState, parsed from this one
// (facts.ParseSectionState), which rejects a state it does not know.
type State string

// The states a script's end line gives.
const (
	StateOK      State = "ok"
	StateAbsent  State = "absent"  // nothing to read, e.g. no such file
	StateMissing State = "missing" // the tool is absent
	StateDenied  State = "denied"  // permission
	StateError   State = "error"   // the command failed
)

// OK reports whether the section was read whole.
func (s Section) OK() bool { return s.State == StateOK }

// Absent reports whether there was nothing to read.
func (s Section) Absent() bool { return s.State == StateAbsent }

// Sections cuts a script's output into sections. Text outside sections
// (a login banner, shell noise) is ignored. Output without the final
// "done" line is truncated: the error says after which section, and the
// sections read so far are returned with it. script names the script in
// the errors ("gather").
func Sections(out []byte, marker, script string) (map[string]Section, error) {
	secs := map[string]Section{}
	begin := []byte(marker + " begin ")
	end := []byte(marker + " end ")
	done := []byte(marker + " done")
	var cur, last string
	var body bytes.Buffer
	finished := false
	for len(out) > 0 {
		var line []byte
		line, out, _ = bytes.Cut(out, []byte("\n"))
		switch {
		case bytes.HasPrefix(line, begin):
			cur = strings.TrimSpace(string(line[len(begin):]))
			body.Reset()
		case bytes.HasPrefix(line, end):
			f := strings.Fields(string(line[len(end):]))
			if len(f) < 1 || f[0] != cur {
				return nil, fmt.Errorf("%s output malformed: end of section %q without its beginning", script, strings.Join(f, " "))
			}
			st := StateOK
			if len(f) > 1 {
				st = State(f[1])
			}
			// The newline printed before the end marker is not content.
			secs[cur] = Section{Name: cur, State: st, Body: strings.TrimSuffix(body.String(), "\n")}
			last, cur = cur, ""
		case bytes.Equal(bytes.TrimRight(line, "\r"), done):
			finished = true
		case cur != "":
			body.Write(line)
			body.WriteByte('\n')
		}
	}
	return secs, sectionsErr(secs, finished, cur, last, script)
}

func sectionsErr(secs map[string]Section, finished bool, cur, last, script string) error {
	switch {
	case len(secs) == 0:
		return fmt.Errorf("%s output not understood: no kaudit sections (did the remote shell run /bin/sh -s? a forced command or a restricted shell prints something else)", script)
	case finished:
		return nil
	case cur != "":
		return fmt.Errorf("%s output truncated inside section %q", script, cur)
	}
	return fmt.Errorf("%s output truncated after section %q", script, last)
}
