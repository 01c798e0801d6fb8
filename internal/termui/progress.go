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

// Round rounds a duration for people: tenths of a second below a minute
// (6.1s), whole seconds above (2m13s).
func Round(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Line is the progress line at most width columns wide:
//
//	scanning [██████░░░░░░░░░░░░░░] 37/120 hosts · 2 failed · 6.1s · ETA 12s
//
// The bar gives way first when the width is short.
func (p Progress) Line(width int) string {
	parts := []string{fmt.Sprintf("%d/%d hosts", p.Done, p.Total), fmt.Sprintf("%d failed", p.Failed), Round(p.Elapsed).String()}
	if eta, ok := p.ETA(); ok {
		parts = append(parts, "ETA "+Round(eta).String())
	}
	tail := strings.Join(parts, " · ")
	const head = "scanning "
	barLen := width - StringWidth(head) - StringWidth(tail) - 3
	if barLen > 30 {
		barLen = 30
	}
	if barLen < 5 {
		return Truncate(head+tail, width)
	}
	filled := 0
	if p.Total > 0 {
		filled = barLen * p.Done / p.Total
	}
	return head + "[" + strings.Repeat("█", filled) + strings.Repeat("░", barLen-filled) + "] " + tail
}
