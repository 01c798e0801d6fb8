package pipeline

import "github.com/kaudit/kaudit/internal/fanout"

// FitOpenFiles bounds a fan-out of n connections by this process's
// open-file limit: the bound, and a notice for the user when it is lower
// than n (see fanout.FitOpenFiles).
func FitOpenFiles(n int) (int, string) {
	return fanout.FitOpenFiles(n, fanout.OpenFileLimit())
}
