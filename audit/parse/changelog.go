package parse

import (
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

const fixTitle = "net: Update window_clamp if SOCK_RCVBUF is set"

// KernelChangelog parses the gather script's kernel-changelog section:
// "source=WHERE" then the changelog lines that name the window-clamp fix
// (fixTitle) or an "LTS tag: vX.Y.Z" (the highest one wins). nil when the
// section names no source.
func KernelChangelog(body string) *facts.KernelChangelog {
	c := &facts.KernelChangelog{}
	var best []int
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "source="):
			c.Source = strings.TrimPrefix(line, "source=")
		case fixTitleLine(line):
			c.HasFix = true
		}
		if i := strings.Index(line, "LTS tag: v"); i >= 0 {
			tag := strings.Fields(line[i+len("LTS tag: v"):])
			if len(tag) == 0 {
				continue
			}
			if v := versionInts(tag[0]); v != nil && lessInts(best, v) {
				best, c.LastLTSTag = v, "v"+strings.TrimRight(tag[0], ".,;")
			}
		}
	}
	if c.Source == "" {
		return nil
	}
	return c
}

func versionInts(s string) []int {
	var out []int
	for _, p := range strings.Split(strings.TrimRight(s, ".,;"), ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

func lessInts(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
