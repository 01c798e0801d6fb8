package parse

import (
	"regexp"
	"strings"
)

// bootIDRe is the form the kernel prints /proc/sys/kernel/random/boot_id
// in: a lowercase UUID (drivers/char/random.c, proc_do_uuid).
var bootIDRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// BootID is the host's boot id from the text of
// /proc/sys/kernel/random/boot_id, "" for anything else (absent, denied,
// or not a UUID): a value kaudit keys its probe records by is taken only
// in the kernel's exact form.
func BootID(text string) string {
	t := strings.TrimSpace(text)
	if !bootIDRe.MatchString(t) {
		return ""
	}
	return t
}
