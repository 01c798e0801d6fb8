package fanout

import (
	"strings"
	"testing"
)

func TestFitOpenFiles(t *testing.T) {
	for _, tc := range []struct {
		want   int
		files  uint64
		fit    int
		notice string
	}{
		{32, 0, 32, ""},      // limit unknown: kept
		{32, 1024, 32, ""},   // fits
		{480, 1024, 480, ""}, // exactly fits: (1024-64)/2
		{481, 1024, 480, "concurrency 481 lowered to 480: the open-file limit is 1024"},
		{300, 100, 18, "concurrency 300 lowered to 18: the open-file limit is 100"},
		{10, 40, 1, "concurrency 10 lowered to 1: the open-file limit is 40"},
		{1, 40, 1, ""},
		{5000, 1 << 20, 5000, ""},
	} {
		fit, notice := fitFiles(tc.want, tc.files)
		if fit != tc.fit || !strings.HasPrefix(notice, tc.notice) || (tc.notice == "") != (notice == "") {
			t.Errorf("fitFiles(%d, %d) = %d, %q; want %d, %q…", tc.want, tc.files, fit, notice, tc.fit, tc.notice)
		}
	}
}

func TestOpenFileLimit(t *testing.T) {
	if OpenFileLimit() < 3 {
		t.Errorf("OpenFileLimit() = %d: not read", OpenFileLimit())
	}
}

func TestKeptFit(t *testing.T) {
	for _, c := range []struct {
		want, inFlight, extra int
		files                 uint64
		fit                   int
		need                  uint64
	}{
		{10000, 32, 64, 0, 10000, 10192},     // limit unknown: all
		{10000, 32, 64, 20000, 10000, 10192}, // issue 31: a 20,000 limit fits 10,000 hosts
		{10000, 32, 64, 4096, 3904, 10192},   // part of them
		{10000, 1000, 64, 1024, 0, 12128},    // none: the fan-out takes it all
		{1000, 64, 64, 1048576, 1000, 1256},  // a systemd service's limit
	} {
		fit, need, _ := keptFit(c.want, c.inFlight, c.extra, c.files)
		if fit != c.fit || need != c.need {
			t.Errorf("keptFit(%d, %d, %d, %d) = %d, %d; want %d, %d", c.want, c.inFlight, c.extra, c.files, fit, need, c.fit, c.need)
		}
	}
}
