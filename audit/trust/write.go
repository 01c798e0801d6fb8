package trust

import (
	"fmt"
	"github.com/kaudit/kaudit/internal/located"
	"github.com/kaudit/kaudit/internal/termsafe"
	"io"
	"strings"

	"github.com/kaudit/kaudit/audit/transport"
)

// Write prints one line per entry: host, known_hosts name, key type and
// fingerprint, status. Host-provided text (an error message) is quoted
// when it is not plain.
func Write(w io.Writer, entries []Entry) {
	fmt.Fprintf(w, "%-28s %-30s %-22s %-52s %s\n", "HOST", "KNOWN_HOSTS NAME", "KEY TYPE", "FINGERPRINT", "STATUS")
	for _, e := range entries {
		host := e.Host
		if e.Bastion {
			host = "(bastion) " + host
		}
		status := string(e.Status)
		switch {
		case e.Status == Changed || e.Status == Revoked:
			status += "  " + strings.Join(e.Where, ", ")
		case e.Err != nil:
			status += ": " + e.Err.Msg
		}
		fmt.Fprintf(w, "%-28s %-30s %-22s %-52s %s\n", host, e.Name, e.KeyType(), e.Fingerprint(), termsafe.Line(status))
	}
}

// Count counts the entries with status s.
func Count(entries []Entry, s Status) int {
	n := 0
	for _, e := range entries {
		if e.Status == s {
			n++
		}
	}
	return n
}

// Untrusted counts the entries whose key is not trusted after Fetch (or
// Record): CHANGED, REVOKED, an invalid certificate, or no key fetched.
// New keys not recorded are counted by Pending instead.
func Untrusted(entries []Entry) int {
	return Count(entries, Changed) + Count(entries, Revoked) + Count(entries, BadCert) + Count(entries, Failed)
}

// ChangedWarnings is one message per CHANGED key: which host offers what,
// where known_hosts has the other key, and what to do about it.
func ChangedWarnings(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		if e.Status != Changed {
			continue
		}
		out = append(out, located.WithHint(fmt.Sprintf("HOST KEY CHANGED for %s (%s): it now offers %s %s, known_hosts has another key at %s; NOT overwritten",
			e.Host, e.Name, e.KeyType(), e.Fingerprint(), strings.Join(e.Where, ", ")),
			"find out why (rebuilt host, or someone in the middle), then remove the old line (ssh-keygen -R "+transport.ShellName(e.Name)+") and run kaudit trust again"))
	}
	return out
}
