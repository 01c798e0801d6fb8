package gather

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// brokerProcess reads the broker-process section: one "TAG VALUE" line
// per fact, "TAG !denied PATH" (or "!absent") for what the login could
// not read. A missing or absent section leaves Kafka.Process nil.
func (a *assembler) brokerProcess(s remote.Section) {
	if a.f.Kafka == nil {
		return
	}
	a.f.Kafka.Process = BrokerProcess(s.Body)
	if u := a.f.Kafka.Process.Unread; len(u) > 0 {
		a.note(facts.SecProcess, facts.SectionPartial, unreadList(u))
	}
}

// BrokerProcess parses the body of a broker-process section.
func BrokerProcess(body string) *facts.BrokerProcess {
	p := &facts.BrokerProcess{FDs: -1, Maps: -1, SwapKB: -1, MemTotalKB: -1, Unread: map[string]string{}}
	text := map[string]string{}
	for _, line := range strings.Split(body, "\n") {
		tag, v, _ := strings.Cut(line, " ")
		if tag == "" {
			continue
		}
		if why, bad := strings.CutPrefix(v, "!"); bad {
			p.Unread[unreadKey(tag, why)] = why
			continue
		}
		switch tag {
		case "limits", "status", "meminfo":
			text[tag] += v + "\n"
		case "fds":
			p.FDs = count(v, &p.Unread, tag)
		case "maps":
			p.Maps = count(v, &p.Unread, tag)
		case "exe":
			p.ExeFrom, p.Exe, _ = strings.Cut(v, " ")
		case "release":
			if jv, ok := parse.JavaVersion(v); ok {
				p.JavaVersion = jv
			} else {
				p.Unread["release"] = "no JAVA_VERSION in the release file"
			}
		case "heap":
			if n, ok := parse.HeapFlag(v, "Xmx"); ok {
				p.Xmx = n
			} else if n, ok := parse.HeapFlag(v, "Xms"); ok {
				p.Xms = n
			}
		}
	}
	limits(p, text["limits"])
	p.SwapKB = kb(p, "status", text["status"], "VmSwap")
	p.MemTotalKB = kb(p, "meminfo", text["meminfo"], "MemTotal")
	if len(p.Unread) == 0 {
		p.Unread = nil
	}
	return p
}

// unreadKey names an unreadable file by what it holds: "file !denied
// /proc/1/limits" is "limits".
func unreadKey(tag, why string) string {
	if tag != "file" {
		return tag
	}
	path := why[strings.LastIndexByte(why, ' ')+1:]
	return path[strings.LastIndexByte(path, '/')+1:]
}

func count(v string, unread *map[string]string, tag string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		(*unread)[tag] = "not a count: " + strconv.Quote(v)
		return -1
	}
	return n
}

func limits(p *facts.BrokerProcess, text string) {
	if _, denied := p.Unread["limits"]; denied {
		return
	}
	l, ok, err := parse.ProcLimit(text, "Max open files")
	switch {
	case err != nil:
		p.Unread["limits"] = err.Error()
	case !ok:
		p.Unread["limits"] = "no \"Max open files\" line in /proc/PID/limits"
	default:
		p.NoFile = &l
	}
}

func kb(p *facts.BrokerProcess, file, text, key string) int64 {
	if _, denied := p.Unread[file]; denied {
		return -1
	}
	n, ok, err := parse.KBField(text, key)
	switch {
	case err != nil:
		p.Unread[file] = err.Error()
	case !ok:
		p.Unread[file] = "no " + key + " line"
	default:
		return n
	}
	return -1
}

func unreadList(u map[string]string) string {
	var b []string
	for _, k := range slices.Sorted(maps.Keys(u)) {
		b = append(b, k+": "+u[k])
	}
	return "not readable: " + strings.Join(b, "; ")
}
