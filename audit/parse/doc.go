// Package parse holds pure functions that turn captured command output into
// facts: /proc/net/netstat counters, `ss -ltn` listeners, `ethtool -g` rings
// and `ethtool -k` offloads, /etc/os-release, Kafka jar names and command
// lines, Java .properties files, the sysctl files that win at boot, default
// routes and kernel SYN-flood log lines.
//
// Nothing here does I/O or runs a command: every function takes the text a
// host printed and returns values (or an error that says what was expected
// and what was found). The gatherer decides what to run; this package only
// reads. Each parser is tested table-driven on real captures stored under
// testdata/<kind>/ (see testdata/README.md for where each sample came from).
//
// Errors that carry the host's own words (for example ethtool's "Operation
// not supported") are *HostError values, so callers can record that text
// verbatim in a section status, and tell it apart from a parse failure with
// errors.As.
package parse

// HostError is an error reported by the host itself (a tool's own message),
// as opposed to output this package could not understand. Text is the host's
// wording, trimmed, e.g. "Operation not supported".
type HostError struct {
	Text string
}

func (e *HostError) Error() string { return e.Text }
