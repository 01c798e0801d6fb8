package termui

import (
	"fmt"
	"strings"
	"time"
)

// Progress is the state of a fan-out, as the progress line shows it.
type Progress struct {
	Done, Total int
	Failed      int // hosts that could not be audited so far
	Elapsed     time.Duration
}

// etaAfter is how many hosts must have finished before an ETA is shown:
// the first hosts to answer say little about the rest.
const etaAfter = 3

// ETA estimates the time left from the rate so far; ok is false until
// etaAfter hosts have finished, and once every host has.
func (p Progress) ETA() (time.Duration, bool) {
	if p.Done < etaAfter || p.Done >= p.Total || p.Elapsed <= 0 {
		return 0, false
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Total-p.Done)), true
}

// Duration formats a duration for people: tenths of a second below a
// minute (0.4s, 6.1s, not 6.109074s), whole seconds above (2m13s).
func Duration(d time.Duration) string {
	if d < time.Minute-50*time.Millisecond {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// Line is the progress line at most width columns wide:
//
//	scanning [██████░░░░░░░░░░░░░░] 37/120 hosts · 2 failed · 6.1s · ETA 12s
//
// The bar gives way first when the width is short.
func (p Progress) Line(width int) string {
	parts := []string{fmt.Sprintf("%d/%d hosts", p.Done, p.Total), fmt.Sprintf("%d failed", p.Failed), Duration(p.Elapsed)}
	if eta, ok := p.ETA(); ok {
		parts = append(parts, "ETA "+Duration(eta))
	}
	tail := strings.Join(parts, " · ")
	const head = "scanning "
	barLen := min(width-StringWidth(head)-StringWidth(tail)-3, 30)
	if barLen < 5 {
		return Truncate(head+tail, width)
	}
	filled := 0
	if p.Total > 0 {
		filled = barLen * p.Done / p.Total
	}
	return head + "[" + strings.Repeat("█", filled) + strings.Repeat("░", barLen-filled) + "] " + tail
}
