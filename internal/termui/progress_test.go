package termui

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for in, want := range map[time.Duration]string{
		6109074 * time.Microsecond:           "6.1s",
		40 * time.Millisecond:                "0.0s",
		850 * time.Millisecond:               "0.8s",
		133*time.Second + 400*1e6:            "2m13s",
		59*time.Second + 960*1e6:             "1m0s",
		12*time.Second + 40*1e6:              "12.0s",
		1*time.Second + 250*time.Microsecond: "1.0s",
	} {
		if got := Duration(in); got != want {
			t.Errorf("Duration(%v) = %s, want %s", in, got, want)
		}
	}
}

func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p     Progress
		width int
		want  string
	}{
		{Progress{Done: 0, Total: 8, Elapsed: 40 * time.Millisecond}, 80,
			"scanning [░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░] 0/8 hosts · 0 failed · 0.0s"},
		// Two hosts done: too few for an ETA.
		{Progress{Done: 2, Total: 8, Failed: 1, Elapsed: 6109 * time.Millisecond}, 80,
			"scanning [███████░░░░░░░░░░░░░░░░░░░░░░░] 2/8 hosts · 1 failed · 6.1s"},
		{Progress{Done: 4, Total: 8, Failed: 1, Elapsed: 6109 * time.Millisecond}, 80,
			"scanning [███████████████░░░░░░░░░░░░░░░] 4/8 hosts · 1 failed · 6.1s · ETA 6.1s"},
		{Progress{Done: 4, Total: 8, Elapsed: 2 * time.Second}, 56,
			"scanning [███░░░] 4/8 hosts · 0 failed · 2.0s · ETA 2.0s"},
		{Progress{Done: 8, Total: 8, Elapsed: 2 * time.Second}, 30,
			"scanning 8/8 hosts · 0 failed…"},
	} {
		got := c.p.Line(c.width)
		if got != c.want {
			t.Errorf("Line(%+v, %d) =\n %q\nwant\n %q", c.p, c.width, got, c.want)
		}
		if StringWidth(got) > c.width {
			t.Errorf("Line is %d wide, more than %d", StringWidth(got), c.width)
		}
	}
}
