package main

import (
	"strings"
	"testing"
)

func TestConvert(t *testing.T) {
	var b strings.Builder
	convert(&b, "plain \x1b[1;31mred bold\x1b[0m <x>\n\x1b[2mfaint\x1b[0m\a")
	want := `plain <span style="font-weight:bold;color:#ef5350">red bold</span> &lt;x&gt;` + "\n" + `<span style="opacity:.6">faint</span>` + "\n"
	if b.String() != want {
		t.Errorf("convert =\n%q\nwant\n%q", b.String(), want)
	}
}
