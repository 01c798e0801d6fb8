package ui

import (
	"bytes"
	"strings"
	"testing"
)

// Off a terminal nothing is asked.
func TestNotATerminal(t *testing.T) {
	var prompt bytes.Buffer
	if yes, asked := Ask(strings.NewReader("yes\n"), &prompt, "go?"); yes || asked || prompt.Len() != 0 {
		t.Errorf("Ask off a terminal: yes=%v asked=%v prompt %q", yes, asked, prompt.String())
	}
	if IsTerminal(&prompt) {
		t.Error("a buffer is not a terminal")
	}
}
