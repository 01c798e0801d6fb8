// Package sysctld owns kaudit's one persistent sysctl file,
// /etc/sysctl.d/99-kaudit.conf: it renders the file's content and tells
// which other files would override it at boot. It does no I/O.
//
// The file is kaudit's alone (its header says so), so it is rewritten as a
// whole: a header, then one "key = value" line per key, sorted. Keys set by
// earlier runs stay unless a new value replaces them. Everything that goes
// into it is validated against a narrow alphabet, because it is executed by
// systemd-sysctl / sysctl --system as root on every boot.
package sysctld

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ManagedPath is where kaudit persists sysctl values.
const ManagedPath = "/etc/sysctl.d/99-kaudit.conf"

// HeaderLine is the first line of the managed file.
const HeaderLine = "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'."

const runPrefix = "# Last run: "

var (
	keyRE   = regexp.MustCompile(`^[a-z0-9_.]+$`)
	valueRE = regexp.MustCompile(`^[A-Za-z0-9 _.:-]+$`)
	runRE   = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
)

// ValidKey reports whether k may be written: dotted, lower case, [a-z0-9_.].
func ValidKey(k string) bool { return keyRE.MatchString(k) }

// ValidValue reports whether v may be written: [A-Za-z0-9 _.:-], not blank.
func ValidValue(v string) bool { return valueRE.MatchString(v) && strings.TrimSpace(v) != "" }

// Fold collapses runs of spaces the way the kernel prints multi-value
// sysctls and facts stores them ("4096 87380 6291456").
func Fold(v string) string { return strings.Join(strings.Fields(v), " ") }

// Parse reads a managed file (or any sysctl.d file limited to the same
// alphabet): "key = value" or "key=value" lines, '#' and ';' comments, the
// last assignment of a key winning. Values are folded.
func Parse(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s line %d: %q is not key = value; fix or remove the line, then re-run", ManagedPath, i+1, line)
		}
		k, v = strings.TrimSpace(k), Fold(v) // tabs between fields are fine in a file
		if !ValidKey(k) {
			return nil, fmt.Errorf("%s line %d: key %q is outside [a-z0-9_.]; fix or remove the line, then re-run", ManagedPath, i+1, k)
		}
		if !ValidValue(v) {
			return nil, fmt.Errorf("%s line %d: value %q for %s is outside [A-Za-z0-9 _.:-]; fix or remove the line, then re-run", ManagedPath, i+1, v, k)
		}
		out[k] = v
	}
	return out, nil
}

// Render returns the new content of the managed file: the header with
// runID, then every key of existing (the current managed file, nil when
// there is none) and of set, "key = value", sorted by key; set wins where
// both have a key. It fails on any key, value or run id outside the allowed
// alphabet, in set or in existing, rather than write it. Render is
// idempotent: rendering its own output with the same set and runID returns
// the same bytes.
func Render(existing []byte, set map[string]string, runID string) ([]byte, error) {
	if !runRE.MatchString(runID) {
		return nil, fmt.Errorf("run id %q: want [A-Za-z0-9_.:-]+", runID)
	}
	vals, err := Parse(existing)
	if err != nil {
		return nil, err
	}
	for k, v := range set {
		if !ValidKey(k) {
			return nil, fmt.Errorf("sysctl key %q: want [a-z0-9_.]+", k)
		}
		if !ValidValue(v) {
			return nil, fmt.Errorf("sysctl %s: value %q: want [A-Za-z0-9 _.:-]+", k, v)
		}
		vals[k] = Fold(v)
	}
	var b strings.Builder
	b.WriteString(HeaderLine + "\n")
	b.WriteString(runPrefix + runID + "\n")
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		fmt.Fprintf(&b, "%s = %s\n", k, vals[k])
	}
	return []byte(b.String()), nil
}

// Override is another file whose assignment of Key wins at boot over the
// managed file.
type Override struct {
	Key   string
	File  string
	Line  int
	Value string
}

// Overriders returns, for each key of set, the file that would still win
// at boot once ourFile holds the key, sorted by key. persisted is what the
// host's sysctl files say today (facts.Persisted: the winning file per key).
// Only overriders with a value different from set are returned: one that
// agrees does no harm.
//
// Order at boot (systemd-sysctl, and procps "sysctl --system" ≥ 4): every
// *.conf in /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d,
// /usr/lib/sysctl.d sorted by file name, later assignments winning, a name
// in /etc masking the same name elsewhere. /etc/sysctl.conf comes last:
// procps reads it after the directories, and systemd reads it through the
// /etc/sysctl.d/99-sysctl.conf symlink, which sorts after 99-kaudit.conf
// ('s' > 'k'). So a winning file overrides ours when its name sorts after
// ours, or when it is /etc/sysctl.conf.
func Overriders(persisted map[string]facts.PersistedSysctl, set map[string]string, ourFile string) []Override {
	var out []Override
	for k, v := range set {
		p, ok := persisted[k]
		if !ok || p.File == "" || p.File == ourFile {
			continue
		}
		if Fold(p.Value) == Fold(v) {
			continue
		}
		if WinsOver(p.File, ourFile) {
			out = append(out, Override{Key: k, File: p.File, Line: p.Line, Value: p.Value})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// WinsOver reports whether an assignment in file beats one in ourFile at
// boot (see Overriders).
func WinsOver(file, ourFile string) bool {
	if file == ourFile {
		return false
	}
	if file == "/etc/sysctl.conf" {
		return true
	}
	return path.Base(file) > path.Base(ourFile)
}
