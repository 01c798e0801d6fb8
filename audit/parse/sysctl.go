package parse

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// sysctlDirs are the directories systemd-sysctl reads, in priority order: a
// file in an earlier directory masks a file with the same name in a later one.
var sysctlDirs = []string{
	"/etc/sysctl.d",
	"/run/sysctl.d",
	"/usr/local/lib/sysctl.d",
	"/usr/lib/sysctl.d",
	"/lib/sysctl.d",
}

const etcSysctlConf = "/etc/sysctl.conf"

// sysctlFile is one @file or @link block of the gather output.
type sysctlFile struct {
	path   string // as listed
	source string // where the lines really live: the link target for @link
	masked bool   // a link to /dev/null
	lines  []sysctlLine
}

type sysctlLine struct {
	n    int
	text string
}

// SysctlFiles computes the value each sysctl key will have after boot from
// the sysctl configuration files, as dumped by kaudit's gather script:
//
//	@file /etc/sysctl.d/10-network.conf
//	3:net.core.somaxconn = 1024
//	@link /etc/sysctl.d/99-sysctl.conf /etc/sysctl.conf
//	7:net.ipv4.tcp_syncookies=1
//
// "N:" lines are a file's non-blank, non-comment lines with their line
// numbers; "@link PATH TARGET" is a symbolic link whose lines (the target's)
// follow, and a link to /dev/null masks. The order follows systemd-sysctl:
// *.conf files from /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d,
// /usr/lib/sysctl.d and /lib/sysctl.d, a name in an earlier directory masking
// the same name in later ones, applied in file-name order. /etc/sysctl.conf
// is applied where a sysctl.d link points to it (Debian's and RHEL's
// 99-sysctl.conf) and not again; without such a link it is applied last, as
// procps `sysctl --system` does.
//
// Keys are normalised to dotted form (net/ipv4/tcp_rmem → net.ipv4.tcp_rmem),
// a leading '-' (ignore errors) is dropped and glob keys are skipped; values
// are whitespace-folded. Lines starting with '#' or ';' and lines without '='
// are ignored. For each key the result names the winning file and line and
// lists the earlier assignments it overrides as "path:line=value".
func SysctlFiles(text string) map[string]facts.PersistedSysctl {
	out := map[string]facts.PersistedSysctl{}
	for _, f := range sysctlOrder(parseSysctlDump(text)) {
		for _, l := range f.lines {
			key, value, ok := sysctlAssignment(l.text)
			if !ok {
				continue
			}
			prev, seen := out[key]
			next := facts.PersistedSysctl{Value: value, File: f.source, Line: l.n}
			if seen {
				next.Overridden = append(prev.Overridden, fmt.Sprintf("%s:%d=%s", prev.File, prev.Line, prev.Value))
			}
			out[key] = next
		}
	}
	return out
}

// sysctlOrder returns the files systemd-sysctl applies, in its order:
// per file name the one in the highest-priority directory, sorted by
// name, masked ones left out, and /etc/sysctl.conf last unless a
// 99-sysctl.conf link already applied it.
func sysctlOrder(files []*sysctlFile) []*sysctlFile {
	winners := map[string]*sysctlFile{}
	rank := func(p string) int {
		for i, d := range sysctlDirs {
			if path.Dir(p) == d {
				return i
			}
		}
		return -1
	}
	var etcConf *sysctlFile
	for _, f := range files {
		if f.path == etcSysctlConf {
			etcConf = f
			continue
		}
		r := rank(f.path)
		if r < 0 || !strings.HasSuffix(f.path, ".conf") {
			continue
		}
		name := path.Base(f.path)
		if w, ok := winners[name]; !ok || r < rank(w.path) {
			winners[name] = f
		}
	}
	var order []*sysctlFile
	etcApplied := false
	for _, name := range slices.Sorted(maps.Keys(winners)) {
		f := winners[name]
		if f.masked {
			continue
		}
		if f.source == etcSysctlConf {
			if etcApplied {
				continue
			}
			etcApplied = true
		}
		order = append(order, f)
	}
	if !etcApplied && etcConf != nil {
		order = append(order, etcConf)
	}
	return order
}

// parseSysctlDump reads the @file/@link blocks.
func parseSysctlDump(text string) []*sysctlFile {
	var files []*sysctlFile
	var cur *sysctlFile
	for _, raw := range strings.Split(text, "\n") {
		l := strings.TrimRight(raw, "\r")
		switch {
		case strings.HasPrefix(l, "@file "):
			p := strings.TrimSpace(strings.TrimPrefix(l, "@file "))
			cur = &sysctlFile{path: p, source: p}
			files = append(files, cur)
		case strings.HasPrefix(l, "@link "):
			f := strings.Fields(strings.TrimPrefix(l, "@link "))
			if len(f) < 2 {
				cur = nil
				continue
			}
			target := f[1]
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir(f[0]), target)
			}
			target = path.Clean(target)
			cur = &sysctlFile{path: f[0], source: target, masked: target == "/dev/null"}
			files = append(files, cur)
		case cur != nil:
			num, rest, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(num)
			if err != nil || n <= 0 {
				continue
			}
			cur.lines = append(cur.lines, sysctlLine{n: n, text: rest})
		}
	}
	return files
}

// sysctlAssignment reads one sysctl.d line.
func sysctlAssignment(line string) (key, value string, ok bool) {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' || t[0] == ';' {
		return "", "", false
	}
	k, v, found := strings.Cut(t, "=")
	if !found {
		return "", "", false
	}
	k = strings.TrimSpace(k)
	k = strings.TrimPrefix(k, "-")
	k = strings.TrimSpace(k)
	if k == "" || strings.ContainsAny(k, "*?[") {
		return "", "", false
	}
	return normalizeSysctlKey(k), strings.Join(strings.Fields(v), " "), true
}

// normalizeSysctlKey returns the dotted form of a sysctl key. As in
// systemd's sysctl_normalize, when the first separator is a slash the key is
// a path: slashes become dots and dots (inside interface names such as
// eth0.100) become slashes.
func normalizeSysctlKey(k string) string {
	i := strings.IndexAny(k, "./")
	if i < 0 || k[i] == '.' {
		return k
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return '.'
		case '.':
			return '/'
		}
		return r
	}, k)
}
