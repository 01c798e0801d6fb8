package parse

import (
	"regexp"
	"strings"
)

// reSubsystem is RHEL's "[net] " subsystem tag in front of a backported
// title (there may be two: "[net] [tcp] ").
var reSubsystem = regexp.MustCompile(`^(\[[A-Za-z0-9_./ -]{1,40}\] )+`)

// fixTitleLine says whether one changelog line names the fix itself: the
// exact title "net: Update window_clamp if SOCK_RCVBUF is set" as an entry
// (after "- " or "* " and RHEL's "[subsystem] " tags), followed by nothing,
// an author "(…)", a tracker "[…]" or "{…}". It does not match a line that
// merely contains the title: a revert (`Revert "net: Update …"`), a longer
// title, or the 2026 near miss "tcp: update window_clamp when SO_RCVBUF is
// set" (the fix is Linux commit 909172a).
func fixTitleLine(line string) bool {
	s := strings.TrimSpace(line)
	for _, bullet := range []string{"- ", "* ", "+ "} {
		if strings.HasPrefix(s, bullet) {
			s = strings.TrimSpace(s[len(bullet):])
			break
		}
	}
	s = reSubsystem.ReplaceAllString(s, "")
	rest, ok := strings.CutPrefix(s, fixTitle)
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, " \t")
	return rest == "" || strings.ContainsAny(rest[:1], "([{")
}
