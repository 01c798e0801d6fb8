package remediate

import (
	"cmp"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
)

// The broker's open-files limit is raised through its own systemd unit:
// a drop-in in /etc/systemd/system/UNIT.d (systemd.unit(5), "drop-in
// directories") setting LimitNOFILE= (systemd.exec(5), "Process
// properties": "LimitNOFILE=soft:hard", one value sets both). A running
// process keeps the limit it started with: the change takes effect at
// the broker's next start, which kaudit never makes.

// DropInName is the file kaudit writes in a unit's drop-in directory;
// "90-" sorts it after a packager's and a provisioner's usual drop-ins.
const DropInName = "90-kaudit-nofile.conf"

// DropInPath is kaudit's drop-in for unit.
func DropInPath(unit string) string { return "/etc/systemd/system/" + unit + ".d/" + DropInName }

// DropInText is the drop-in's content for the LimitNOFILE value to.
func DropInText(to string) string { return "[Service]\nLimitNOFILE=" + to + "\n" }

// NoFileTarget names the open-files change of unit (Change.Target).
func NoFileTarget(unit string) string { return unit + " LimitNOFILE" }

// notServiceAction is the manual action for a broker not started by a
// systemd service.
func notServiceAction(where string, n int64) string {
	return fmt.Sprintf("%s: raise its limit where it is started: `ulimit -n %d` before kafka-server-start, or the container runtime's --ulimit nofile=%d:%d", where, n, n, n)
}

// addNoFile plans the broker's open-files limit n: a drop-in for its
// unit, or a manual action saying why not and what to do instead.
func (p *planner) addNoFile(rule string, n int64) {
	k := p.f.Kafka
	if k == nil {
		p.addManual(rule, fmt.Sprintf("no Kafka broker found on this host: give it an open-files limit of at least %d where it is started", n))
		return
	}
	st := p.f.Sections[facts.SecBrokerUnit]
	u := k.Unit
	switch {
	case u == nil && st.State == facts.SectionAbsent:
		p.addManual(rule, notServiceAction(st.Message, n))
		return
	case u == nil:
		p.addManual(rule, fmt.Sprintf("the broker's (pid %d) systemd unit could not be read (%s: %s): if it runs as a service, add %s with %q; otherwise %s",
			k.PID, cmp.Or(string(st.State), "(version unknown)"), st.Message, DropInPath("UNIT"), "LimitNOFILE="+strconv.FormatInt(n, 10), notServiceAction("", n)))
		return
	case !safe.ServiceName(u.Name):
		p.addManual(rule, fmt.Sprintf("the broker's unit name %q is not one kaudit writes a drop-in for: raise its LimitNOFILE to %d by hand", u.Name, n))
		return
	case u.NoFile == nil:
		p.addManual(rule, fmt.Sprintf("%s: what systemd gives it could not be read (%s): add %s with \"[Service]\\nLimitNOFILE=%d\", run systemctl daemon-reload, then restart the broker",
			u.Name, st.Message, DropInPath(u.Name), n))
		return
	case limitAtLeast(u.NoFile.Soft, n):
		p.addManual(rule, fmt.Sprintf("pending broker restart: %s gives %s open files at its next start, the running broker (pid %d) still has its old limit: %s",
			u.Name, limitText(u.NoFile.Soft), k.PID, RestartByHand))
		return
	}
	c := Change{
		Host: p.host, Rules: []string{rule}, Kind: KindUnitDropIn, Target: NoFileTarget(u.Name),
		From: LimitPair(*u.NoFile), To: noFileValue(n, u.NoFile.Hard, k.Process),
		Persist: true, PersistPath: DropInPath(u.Name), RestartRequired: true,
		Note: "the running broker keeps its limit until its next start: " + RestartByHand,
	}
	if later := laterDropIns(u.DropIns); len(later) > 0 {
		c.Note += "\n" + strings.Join(later, ", ") + " sorts after " + DropInName + " and may set LimitNOFILE again: the verify step reads systemd's value back"
	}
	if why, ok := p.dropInWritable(u.Name); !ok {
		p.infeasible = append(p.infeasible, Infeasible{Host: p.host, Rules: []string{rule}, Kind: c.Kind, Target: c.Target, To: c.To,
			Reason:  "cannot write the drop-in: " + why,
			Instead: fmt.Sprintf("set LimitNOFILE=%s in %s's unit where your provisioning keeps it (or `systemctl edit %s` where /etc is writable)", c.To, u.Name, u.Name)})
		return
	}
	p.dropIns = append(p.dropIns, c)
}

// noFileValue is the LimitNOFILE value to write: soft n, and the hard
// limit n unless the unit or the running process already has a higher
// one, which is kept ("n:hard").
func noFileValue(n, unitHard int64, proc *facts.BrokerProcess) string {
	hard := unitHard
	if proc != nil && proc.NoFile != nil && !limitAtLeast(hard, proc.NoFile.Hard) {
		hard = proc.NoFile.Hard
	}
	if limitAtLeast(n, hard) {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10) + ":" + limitText(hard)
}

// dropInWritable reports whether kaudit can create the unit's drop-in:
// in its drop-in directory when that exists, else in /etc/systemd/system
// (kaudit creates the directory).
func (p *planner) dropInWritable(unit string) (string, bool) {
	fs := p.f.Feasibility
	if fs == nil {
		return "", true
	}
	dir := path.Dir(DropInPath(unit))
	if d, known := fs.Dirs[dir]; known && d.Exists {
		return dirWritable(fs, dir)
	}
	return dirWritable(fs, path.Dir(dir))
}

// laterDropIns are the unit's drop-ins whose names sort after kaudit's
// (systemd applies drop-ins in file-name order, the last setting wins).
func laterDropIns(dropIns []string) []string {
	var later []string
	for _, d := range dropIns {
		if b := path.Base(d); b > DropInName {
			later = append(later, d)
		}
	}
	return later
}

// atLeast reports whether limit v (facts.Unlimited for none) is ≥ n.
func limitAtLeast(v, n int64) bool { return v == facts.Unlimited || (n != facts.Unlimited && v >= n) }

func limitText(v int64) string {
	if v == facts.Unlimited {
		return "infinity"
	}
	return strconv.FormatInt(v, 10)
}

// LimitPair is a limit as LimitNOFILE= spells it: "soft:hard", or one
// value when both are equal.
func LimitPair(l facts.Limit) string {
	if l.Soft == l.Hard {
		return limitText(l.Soft)
	}
	return limitText(l.Soft) + ":" + limitText(l.Hard)
}
