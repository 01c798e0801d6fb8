package report

import (
	"strings"
	"testing"

	"github.com/kaudit/kaudit/internal/termui"
)

func TestGridFits(t *testing.T) {
	g := func() *grid {
		g := &grid{cols: []column{
			{head: "HOST", min: 6, wrap: true},
			{head: "N", right: true},
			{head: "KERNEL", min: 8, wrap: true},
			{head: "TEXT", min: 6},
		}}
		g.add(plain("kafka-1"), plain("12"), plain("3.10.0-1160.el7.x86_64"), plain("a long observed value"))
		g.add(plain("kafka-2"), plain("3"), plain("6.1.0-13-amd64"), plain("short"))
		return g
	}
	for _, c := range []struct {
		width int
		want  string
	}{
		// Room to spare: three-space gaps, nothing shrunk.
		{80, "HOST       N   KERNEL                   TEXT\n" +
			"kafka-1   12   3.10.0-1160.el7.x86_64   a long observed value\n" +
			"kafka-2    3   6.1.0-13-amd64           short\n"},
		// Tight: one-space gaps; both long cells of the first row give way
		// (once a row wraps, shrinking it further costs nothing): the
		// kernel wraps after a dot, the text is truncated with "…"; the
		// second row stays on one line.
		{48, "HOST     N KERNEL             TEXT\n" +
			"kafka-1 12 3.10.0-1160.el7.   a long observed v…\n" +
			"           x86_64\n" +
			"kafka-2  3 6.1.0-13-amd64     short\n"},
		{40, ""}, // checked for width only
	} {
		out := g().render(c.width, palette{})
		if c.want != "" && out != c.want {
			t.Errorf("width %d:\n%s\nwant\n%s", c.width, out, c.want)
		}
		for _, l := range strings.Split(out, "\n") {
			if termui.StringWidth(l) > c.width {
				t.Errorf("width %d: line %q is %d wide", c.width, l, termui.StringWidth(l))
			}
		}
	}
}
