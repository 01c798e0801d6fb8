package ui

import (
	"bytes"
	"strings"
	"testing"
)

// Off a terminal nothing is asked or drawn.
func TestNotATerminal(t *testing.T) {
	var prompt bytes.Buffer
	if yes, asked := Ask(strings.NewReader("yes\n"), &prompt, "go?"); yes || asked || prompt.Len() != 0 {
		t.Errorf("Ask off a terminal: yes=%v asked=%v prompt %q", yes, asked, prompt.String())
	}
	var w bytes.Buffer
	p := NewProgress(&w, 3, "scanning hosts")
	p.Step()
	p.Finish()
	if w.Len() != 0 || IsTerminal(&w) {
		t.Errorf("progress off a terminal wrote %q", w.String())
	}
}
