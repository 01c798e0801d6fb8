package remediate

import (
	"fmt"
	"path"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate/sysctld"
	"github.com/kaudit/kaudit/rules"
)

// Infeasible is a change kaudit would make but this host does not let it
// make: it is not planned, and the plan says why and what to do instead.
type Infeasible struct {
	Host    string     `json:"host"`
	Rule    string     `json:"rule"`
	Kind    ChangeKind `json:"kind"`
	Target  string     `json:"target"`
	To      string     `json:"to"`
	Reason  string     `json:"reason"`
	Instead string     `json:"instead"`
}

// runtimeOnlyNote starts the note of a change whose persistence was
// dropped because the user accepted runtime-only changes.
const runtimeOnlyNote = "runtime only (--runtime-only-ok): not persisted"

// feasible decides, from the host's facts.Feasibility, whether c can be
// made here. It returns the change to plan (possibly without its
// persistence, when only that is impossible and the user accepted
// runtime-only changes) or, when nothing of it can be made, why not.
// Without feasibility facts every change is kept, as before they existed.
func (p *planner) feasible(c Change) (Change, *Infeasible) {
	fs := p.f.Feasibility
	if fs == nil {
		return c, nil
	}
	no := func(reason, instead string) (Change, *Infeasible) {
		return c, &Infeasible{Host: p.host, Rule: c.Rule, Kind: c.Kind, Target: c.Target, To: c.To, Reason: reason, Instead: instead}
	}
	if c.Kind == KindSysctl {
		if why, ok := sysctlWritable(fs, c.Target); !ok {
			if rules.HostWideOnly(c.Target) {
				return no(fmt.Sprintf("%s is global: read-only in this host's network namespace (%s; a container?)", c.Target, why),
					fmt.Sprintf("set it on the node that runs this container (%s = %s in its /etc/sysctl.d)", c.Target, c.To))
			}
			return no(fmt.Sprintf("%s is read-only here (%s)", c.Target, why),
				fmt.Sprintf("set %s = %s where this host's kernel settings are managed", c.Target, c.To))
		}
	}
	if !c.Persist {
		return c, nil
	}
	dir := persistDir(c)
	why, ok := dirWritable(fs, dir)
	if ok {
		return c, nil
	}
	switch {
	case c.Kind == KindKafkaProperty:
		return no(fmt.Sprintf("cannot write server.properties: %s", why),
			fmt.Sprintf("set %s=%s in %s by hand (or where your provisioning keeps it)", c.Target, c.To, c.PersistPath))
	case !c.Runtime:
		return no(fmt.Sprintf("cannot persist: %s", why), "add "+persistWhat(c)+" to your provisioning")
	case p.runtimeOnlyOK:
		c.Persist, c.PersistPath, c.PersistMatch = false, "", ""
		c.Note = strings.TrimPrefix(c.Note+"\n"+runtimeOnlyNote+", "+why+"; it reverts at the next reboot: add "+persistWhat(c)+" to your provisioning", "\n")
		return c, nil
	}
	return no(fmt.Sprintf("cannot persist: %s", why),
		"add "+persistWhat(c)+" to your provisioning; or rerun with --runtime-only-ok to set the running value now without persisting it")
}

// keep is c as far as the host allows it (feasible); a zero Change, with
// the reason recorded in p.infeasible, when it allows none of it.
func (p *planner) keep(c Change) Change {
	c, no := p.feasible(c)
	if no != nil {
		p.infeasible = append(p.infeasible, *no)
		return Change{}
	}
	return c
}

// cannot reports whether the host does not allow the change of target:
// then the plan's after-values must not count on it.
func (p *planner) cannot(kind ChangeKind, target string) bool {
	for _, no := range p.infeasible {
		if no.Kind == kind && no.Target == target {
			return true
		}
	}
	return false
}

// persistDir is the directory a change's persistence writes in ("" for a
// NetworkManager connection: nmcli writes it).
func persistDir(c Change) string {
	switch {
	case c.Kind == KindSysctl:
		return path.Dir(sysctld.ManagedPath)
	case strings.HasPrefix(c.PersistMatch, NMMatchPrefix):
		return ""
	}
	return path.Dir(c.PersistPath)
}

// persistWhat names what a change would have persisted, for "add … to
// your provisioning".
func persistWhat(c Change) string {
	if c.Kind == KindSysctl {
		return c.Target + " = " + c.To
	}
	if c.Kind.IsNIC() {
		return c.Target + " " + c.To
	}
	return c.Target + "=" + c.To
}

// sysctlWritable reports whether the /proc/sys entry of key takes a write:
// its owner write bit (root passes every access check, the kernel still
// refuses a write to a 0444 entry). Unknown modes count as writable.
func sysctlWritable(fs *facts.Feasibility, key string) (why string, ok bool) {
	m, known := fs.SysctlModes[key]
	if !known || len(m) < 3 || m[2] == 'w' {
		return "", true
	}
	return fmt.Sprintf("/proc/sys/%s is %s", strings.ReplaceAll(key, ".", "/"), m), false
}

// dirWritable reports whether kaudit can create a file in dir: it exists,
// is writable by the login user and is not on a read-only mount. A
// directory the gather did not look at counts as writable.
func dirWritable(fs *facts.Feasibility, dir string) (why string, ok bool) {
	d, known := fs.Dirs[dir]
	switch {
	case dir == "" || !known:
		return "", true
	case !d.Exists && dir == path.Dir(NICPersistPath):
		return "no udev: " + dir + " does not exist", false
	case !d.Exists:
		return dir + " does not exist", false
	case d.ReadOnly:
		return fmt.Sprintf("%s is on a read-only mount (%s, %s)", dir, d.Mount, d.FSType), false
	case !d.Writable:
		return dir + " is not writable by the login user", false
	}
	return "", true
}

// checkSELinux warns when SELinux enforces and chcon is missing while the
// plan replaces files: the replace copies the old file's xattrs (its
// context among them) with cp --preserve=xattr only, so check the
// contexts afterwards (ls -Z).
func (p *planner) checkSELinux(changes []Change) {
	fs := p.f.Feasibility
	if fs == nil || fs.SELinux != "enforcing" || fs.Chcon {
		return
	}
	for _, c := range changes {
		if c.Persist && persistDir(c) != "" {
			p.warn("SELinux is enforcing and chcon is not installed: kaudit keeps the SELinux context of the files it replaces through cp --preserve=xattr only; check them with ls -Z after the run")
			return
		}
	}
}
