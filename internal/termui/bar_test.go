package termui

import (
	"bytes"
	"testing"
)

func TestBarOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := StartBar(&buf, 3, false)
	b.Done(false)
	b.Done(true)
	b.Finish()
	if buf.Len() != 0 {
		t.Errorf("a bar on a non-terminal wrote %q", buf.String())
	}
	if b.state.Done != 2 || b.state.Failed != 1 || b.state.Total != 3 {
		t.Errorf("state %+v, want 2 done, 1 failed of 3", b.state)
	}
}
