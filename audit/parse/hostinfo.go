package parse

import (
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// HostSection is the gather's host section, parsed.
type HostSection struct {
	// Files: path → text of each file read whole; Unread: path or item →
	// why not ("denied", "absent", "unreadable", "not a number: …").
	Files  map[string]string
	Info   facts.HostInfo
	MTU    map[string]int // interface → MTU
	Unread map[string]string
}

// Host parses the host section: "file PATH=TEXT" or "file PATH!WHY",
// "numa-nodes N" (or "!absent PATH"), "mtu IF N", "clock SECONDS.NANOS".
// A line it does not know is ignored; a value it cannot read is named in
// Unread, never guessed.
func Host(body string) HostSection {
	h := HostSection{Files: map[string]string{}, MTU: map[string]int{}, Unread: map[string]string{}}
	for _, line := range strings.Split(body, "\n") {
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case "file":
			h.file(rest)
		case "numa-nodes":
			if n, err := strconv.Atoi(rest); err == nil && n > 0 {
				h.Info.NUMANodes = n
			} else if strings.HasPrefix(rest, "!absent ") {
				h.Info.NUMANodes = -1
			} else {
				h.Unread["numa"] = "not a count: " + rest
			}
		case "mtu":
			name, v, _ := strings.Cut(rest, " ")
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				h.MTU[name] = n
			} else {
				h.Unread["mtu "+name] = strings.TrimPrefix(v, "!")
			}
		case "clock":
			if ns, ok := unixNanos(rest); ok {
				h.Info.Clock = &facts.Clock{HostUnixNano: ns}
			} else {
				h.Unread["clock"] = "date printed " + strconv.Quote(rest)
			}
		}
	}
	return h
}

func (h *HostSection) file(rest string) {
	if i := strings.IndexAny(rest, "=!"); i > 0 {
		if rest[i] == '=' {
			h.Files[rest[:i]] = strings.Join(strings.Fields(rest[i+1:]), " ")
		} else {
			h.Unread[rest[:i]] = rest[i+1:]
		}
	}
}

// unixNanos reads date +%s.%N ("1764940000.123456789"); a date without
// %N (it prints "%N" or "N") gives the whole seconds.
func unixNanos(s string) (int64, bool) {
	sec, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	ns := int64(0)
	if len(frac) == 9 {
		if f, err := strconv.ParseInt(frac, 10, 64); err == nil && f >= 0 {
			ns = f
		}
	}
	return n*1e9 + ns, true
}
