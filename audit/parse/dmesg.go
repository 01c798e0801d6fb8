package parse

import "strings"

// maxSynFloodLines is how many SYN-flood lines SynFloodLines keeps.
const maxSynFloodLines = 20

// SynFloodLines returns the kernel log lines (dmesg output, with or without
// timestamps) that report a SYN flood, in every wording the kernel has used:
//
//	TCP: TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters.           (3.10)
//	TCP: request_sock_TCP: Possible SYN flooding on port 9092. Sending cookies.  Check SNMP counters.
//	TCP: request_sock_TCP: Possible SYN flooding on port 0.0.0.0:9092. Sending cookies.            (6.2+)
//	… Possible SYN flooding on port … Dropping request.                                             (tcp_syncookies=0)
//
// Only the last 20 are kept, oldest first. Lines are returned as printed,
// without trailing whitespace.
func SynFloodLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.Contains(l, "Possible SYN flooding on port") {
			out = append(out, l)
		}
	}
	if len(out) > maxSynFloodLines {
		out = out[len(out)-maxSynFloodLines:]
	}
	return out
}
