// Package safe defines the alphabets of values that reach a remote shell:
// interface names and remote paths. The inventory (which reports a bad
// value with its file and line), the gather script and the applier (the
// last checks before a shell) all use these, so a value one accepts the
// others accept too. Values are single-quoted as well; these alphabets are
// the second line of defence, not the only one.
package safe

import (
	"regexp"
	"strings"
)

// PathExtra lists the characters besides ASCII letters and digits allowed
// in a remote path; every one is inert inside single quotes.
const PathExtra = "/._-+@=,:%~"

// PathRune reports whether r may appear in a remote path.
func PathRune(r rune) bool {
	return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(PathExtra, r))
}

// RemotePath reports whether p is absolute and made of PathRune only.
func RemotePath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, r := range p {
		if !PathRune(r) {
			return false
		}
	}
	return true
}

var ifaceRE = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}$`)

// IfaceChars reports whether s is 1-15 characters of letters, digits and
// _ . : @ - (Linux IFNAMSIZ-1). Callers also refuse a leading '-'.
func IfaceChars(s string) bool { return ifaceRE.MatchString(s) }

// Iface reports whether s is a usable interface name: IfaceChars and no
// leading '-' (which a command would read as an option).
func Iface(s string) bool { return IfaceChars(s) && !strings.HasPrefix(s, "-") }

// serviceName is a systemd service unit name kaudit accepts: the
// characters systemd allows in a unit name (systemd src/basic/unit-name.c,
// VALID_CHARS) and the .service suffix. Anything else never reaches a
// shell or a path.
var serviceName = regexp.MustCompile(`^[A-Za-z0-9:_.@-]+\.service$`)

// ServiceName reports whether name is a systemd service kaudit may
// name in a command or a path.
func ServiceName(name string) bool {
	return len(name) <= 255 && serviceName.MatchString(name) && !strings.Contains(name, "..")
}

var nmUUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NMUUID reports whether s is a NetworkManager connection UUID as nmcli
// prints it: lowercase hex in the 8-4-4-4-12 form.
func NMUUID(s string) bool { return nmUUIDRE.MatchString(s) }

// PseudoFile reports whether p names a file of /proc or /sys that a
// catalog may ask the gather to read (facts.Facts.Files): a RemotePath
// under /proc/ or /sys/ without a ".." step. Those are the kernel's own
// read-only views, never a user's data that could hold a secret.
func PseudoFile(p string) bool {
	if !RemotePath(p) || len(p) > 200 || !(strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")) {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == ".." || s == "." {
			return false
		}
	}
	return !strings.HasSuffix(p, "/")
}
