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
	into(a, facts.SecCgroup, &a.f.Kafka.Cgroup)(parse.CgroupMemory(s.Body))
}

func (a *assembler) logDevices(s remote.Section) {
	if a.f.Kafka == nil || !a.storageSection(facts.SecLogDevices, s) {
		return
	}
	into(a, facts.SecLogDevices, &a.f.Kafka.Devices)(parse.BlockDevices(s.Body))
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
