package parse

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFixTitleLine(t *testing.T) {
	for line, want := range map[string]bool{
		"net: Update window_clamp if SOCK_RCVBUF is set":                                   true,
		"- [net] net: Update window_clamp if SOCK_RCVBUF is set (Paolo Abeni) [1909403]":   true,
		"    - net: Update window_clamp if SOCK_RCVBUF is set":                             true,
		"- net: Update window_clamp if SOCK_RCVBUF is set (Mao Wenan)  [Orabug: 32216346]": true,
		"- [net] [tcp] net: Update window_clamp if SOCK_RCVBUF is set {CVE-0000-0000}":     true,
		"- tcp: update window_clamp when SO_RCVBUF is set":                                 false, // the 2026 near miss
		"- [net] tcp: update window_clamp when SO_RCVBUF is set (Paolo Abeni) [1880000]":   false,
		`- Revert "net: Update window_clamp if SOCK_RCVBUF is set"`:                        false,
		`- [net] Revert "net: Update window_clamp if SOCK_RCVBUF is set" (Paolo Abeni)`:    false,
		"- tcp: net: Update window_clamp if SOCK_RCVBUF is set, take two":                  false,
		"- net: Update window_clamp if SOCK_RCVBUF is set again":                           false,
		"- net: update window_clamp if SOCK_RCVBUF is set":                                 false, // case matters
		"": false,
	} {
		if got := fixTitleLine(line); got != want {
			t.Errorf("fixTitleLine(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestParseChangelogExcerpts(t *testing.T) {
	for _, tt := range []struct {
		file   string
		hasFix bool
		lts    string
	}{
		{"rhel8-4.18.0-287.el8-rpm.txt", true, ""},
		{"rhel8-4.18.0-240.el8-rpm-without.txt", false, ""},
		{"ubuntu-focal-5.4.0-59.65-changelog.Debian.txt", true, ""},
		{"ubuntu-bionic-near-miss-changelog.Debian.txt", false, ""},
		{"ubuntu-bionic-4.15.0-135.139-changelog.Debian-real.txt", true, ""},
		{"uek6-5.4.17-2036-rpm.txt", true, "v5.4.78"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "kernel-changelog", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		c := KernelChangelog("source=rpm -q --changelog kernel\n" + string(b))
		if c == nil || c.HasFix != tt.hasFix || c.LastLTSTag != tt.lts {
			t.Errorf("%s: %+v, want has_fix %v, LTS %q", tt.file, c, tt.hasFix, tt.lts)
		}
	}
}
