package audit

import "github.com/kaudit/kaudit/internal/fanout"

// FitOpenFiles bounds a fan-out of n connections (a scan's, an apply's,
// a rollback's, kaudit trust's) by this process's open-file limit: the
// bound, and a notice for the user when it is lower than n (see
// fanout.FitOpenFiles). Scan applies it itself, silently.
func FitOpenFiles(n int) (int, string) {
	return fanout.FitOpenFiles(n, fanout.OpenFileLimit())
}
