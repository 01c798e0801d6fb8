package pipeline

import (
	"fmt"

	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/waiver"
)

// loadWaivers is the waiver file of --waivers (waiver.Load), nil for "".
// Its errors name the file (and the line of each problem) and say what to
// do; a flow loads it before it reads a report or contacts a host.
func loadWaivers(file string) (waiver.Waivers, error) {
	if file == "" {
		return nil, nil
	}
	w, err := waiver.Load(file)
	if err != nil {
		return nil, fmt.Errorf("--waivers: %w", err)
	}
	return w, nil
}

// waive applies loaded waivers (loadWaivers; none: nothing) to r, a
// warning per expired waiver on c's stderr. Call it between building the
// report and emit.
func waive(c Console, r *report.Report, w waiver.Waivers) {
	if len(w) == 0 {
		return
	}
	for _, msg := range waiver.ApplyWaivers(r, w, c.Now()) {
		c.Warn(msg)
	}
}

// CheckWaivers is kaudit waivers check: the waivers of file listed, those
// expiring within soon days flagged. Its verdict is Findings when any has
// expired.
func CheckWaivers(c Console, file string, soon int) error {
	w, err := waiver.Load(file)
	if err != nil {
		return err
	}
	if expired := waiver.WriteCheck(c.Stdout, w, c.Now(), soon); expired > 0 {
		return failHint(Findings, "renew them with a new date or fix the findings", "%d waiver(s) expired", expired)
	}
	return nil
}
