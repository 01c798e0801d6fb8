package gather

import (
	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// brokerCgroup and logDevices are raw like broker-unit: an older script
// (or fake host) without the section leaves the fact nil and notes why;
// they apply to a broker only.
func (a *assembler) brokerCgroup(s remote.Section) {
	if a.f.Kafka == nil || !a.storageSection(facts.SecCgroup, s) {
		return
	}
	cg, err := parse.CgroupMemory(s.Body)
	if err != nil {
		a.note(facts.SecCgroup, facts.SectionError, err.Error())
		return
	}
	a.f.Kafka.Cgroup = cg
}

func (a *assembler) logDevices(s remote.Section) {
	if a.f.Kafka == nil || !a.storageSection(facts.SecLogDevices, s) {
		return
	}
	d, err := parse.BlockDevices(s.Body)
	if err != nil {
		a.note(facts.SecLogDevices, facts.SectionError, err.Error())
		return
	}
	a.f.Kafka.Devices = d
}

// storageSection reports whether s came back "ok"; an absent one is
// noted without an error (no broker pid, no log dirs, no /sys).
func (a *assembler) storageSection(name string, s remote.Section) bool {
	switch {
	case s.Name == "":
		a.note(name, facts.SectionAbsent, "not gathered (an older gather script)")
		return false
	case s.State != "ok":
		a.noteSection(name, s, s.Body)
		return false
	}
	return true
}
