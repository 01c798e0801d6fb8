package waiver

import (
	"fmt"
	"time"

	"github.com/kaudit/kaudit/report"
)

// ApplyFile loads the waiver file and applies it to r (ApplyWaivers),
// returning its warnings. A file that does not load is an error that
// starts "waivers: " and names the file and line.
func ApplyFile(r *report.Report, file string, now time.Time) ([]string, error) {
	w, err := Load(file)
	if err != nil {
		return nil, fmt.Errorf("waivers: %w", err)
	}
	return ApplyWaivers(r, w, now), nil
}
