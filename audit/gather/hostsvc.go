package gather

import (
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// The host services' sections (facts/hostsvc.go). Each is raw: a section
// missing from the output (an older script, a client host) leaves its
// fact nil and no note; one that came back other than ok is noted.

func (a *assembler) timeSync(s remote.Section) {
	if !a.present(facts.SecTimeSync, s) {
		return
	}
	ts, why := parse.TimeSync(s.Body)
	if ts == nil {
		a.note(facts.SecTimeSync, facts.SectionError, why)
		return
	}
	a.f.TimeSync = ts
}

func (a *assembler) conntrackStat(s remote.Section) {
	if !a.present(facts.SecConntrack, s) {
		return
	}
	into(a, facts.SecConntrack, &a.f.ConntrackStat)(parse.ConntrackStat(s.Body))
}

func (a *assembler) rdns(s remote.Section) {
	if !a.present(facts.SecRDNS, s) {
		return
	}
	into(a, facts.SecRDNS, &a.f.ReverseDNS)(parse.ReverseDNS(s.Body))
}

// present reports whether raw section s came back ok; one that came back
// otherwise is noted, a missing one is not.
func (a *assembler) present(name string, s remote.Section) bool {
	switch {
	case s.Name == "":
		return false
	case !s.OK():
		a.noteSection(name, s, s.Body)
		return false
	}
	return true
}
