package gather

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/parse"
	"github.com/kaudit/kaudit/internal/remote"
)

// brokerUnit reads the broker-unit section: the broker's cgroup lines
// (cgroup=), whether systemd runs (systemd=), and, when the script found
// a service candidate, the unit it asked about (unit=) and systemctl
// show's lines (show=). The Go parse of the cgroup decides; the script's
// candidate is used only when it is the same unit.
func (a *assembler) brokerUnit(s remote.Section) {
	switch {
	case s.Name == "":
		a.note(facts.SecBrokerUnit, facts.SectionError, "section missing from gather output")
		return
	case s.Absent():
		a.note(facts.SecBrokerUnit, facts.SectionAbsent, "no broker process: its service is unknown")
		return
	case a.f.Kafka == nil:
		a.note(facts.SecBrokerUnit, facts.SectionError, "broker-unit section without the kafka section")
		return
	case !s.OK():
		a.noteSection(facts.SecBrokerUnit, s, fmt.Sprintf("/proc/%s/cgroup: %s (run with become: sudo)", keyValues(s.Body, "=")["pid"], s.State))
		return
	}
	var cg, show []string
	kv := map[string]string{}
	for _, line := range strings.Split(s.Body, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "cgroup":
			cg = append(cg, v)
		case "show":
			show = append(show, v)
		case "pid", "systemd", "unit":
			kv[k] = v
		}
	}
	svc, err := parse.ParseCgroup(strings.Join(cg, "\n"))
	if err != nil {
		a.note(facts.SecBrokerUnit, facts.SectionError, "/proc/"+kv["pid"]+"/cgroup: "+err.Error())
		return
	}
	if svc.Unit == "" {
		// "absent": there is no service to read; the message says where
		// the broker runs instead (the fix's manual action quotes it).
		a.note(facts.SecBrokerUnit, facts.SectionAbsent, fmt.Sprintf("the broker (pid %s) runs in cgroup %s: %s", kv["pid"], svc.Cgroup, svc.Why))
		return
	}
	u := &facts.BrokerUnit{Name: svc.Unit, Cgroup: svc.Cgroup, SystemdRuns: kv["systemd"] == "yes"}
	a.f.Kafka.Unit = u
	switch {
	case kv["systemd"] != "yes":
		a.note(facts.SecBrokerUnit, facts.SectionPartial, "cgroup names "+svc.Unit+" but systemd does not run here (/run/systemd/system absent)")
		return
	case kv["unit"] != svc.Unit:
		a.note(facts.SecBrokerUnit, facts.SectionError, fmt.Sprintf("the script asked systemd about %q, the cgroup names %s (report this as a kaudit bug)", kv["unit"], svc.Unit))
		return
	}
	sh, err := parse.ParseUnitShow(strings.Join(show, "\n"))
	if err != nil {
		a.note(facts.SecBrokerUnit, facts.SectionPartial, svc.Unit+": "+err.Error())
		return
	}
	u.NoFile = &facts.Limit{Soft: sh.NoFileSoft, Hard: sh.NoFileHard}
	u.FragmentPath, u.DropIns = sh.FragmentPath, sh.DropIns
}
