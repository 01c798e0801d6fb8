package remediate

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/remediate/sysctld"
	"github.com/kaudit/kaudit/rules"
)

// Infeasible is a change kaudit would make but this host does not let it
// make: it is not planned, and the plan says why and what to do instead.
type Infeasible struct {
	Host    string     `json:"host"`
	Rules   []string   `json:"rules"` // the rules asking, sorted
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
		return c, &Infeasible{Host: p.host, Rules: c.Rules, Kind: c.Kind, Target: c.Target, To: c.To, Reason: reason, Instead: instead}
	}
	if c.Kind == KindSysctl {
		if fs.ProcSysReadOnly {
			return no("/proc/sys is mounted read-only here (a container)",
				fmt.Sprintf("set %s = %s where this container's sysctls are given (its runtime's --sysctl or the pod's securityContext.sysctls for a per-namespace one; the node's /etc/sysctl.d otherwise)", c.Target, c.To))
		}
		if fs.Container != "" && rules.KernelWide(c.Target) {
			return no(fmt.Sprintf("%s is kernel-wide and this host is a container (%s): writing it here would change the node's kernel for everything that runs on it", c.Target, fs.Container),
				fmt.Sprintf("set it on the node that runs this container (%s = %s in its /etc/sysctl.d)", c.Target, c.To))
		}
		if why, ok := sysctlWritable(fs, c.Target); !ok {
			if rules.HostWideOnly(c.Target) {
				return no(fmt.Sprintf("%s is global: read-only in this host's network namespace (%s; a container?)", c.Target, why),
					fmt.Sprintf("set it on the node that runs this container (%s = %s in its /etc/sysctl.d)", c.Target, c.To))
			}
			return no(fmt.Sprintf("%s is read-only here (%s)", c.Target, why),
				fmt.Sprintf("set %s = %s where this host's kernel settings are managed", c.Target, c.To))
		}
		// A value the running kernel already has needs nothing of it.
		if c.From != c.To {
			reason, instead, note := kernelTakes(fs.Kernel, c.Target, c.To)
			if reason != "" {
				return no(reason, instead)
			}
			if note != "" {
				c.Note = strings.TrimPrefix(c.Note+"\n"+note, "\n")
			}
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
		c.Persist, c.PersistPath, c.PersistMatch, c.NM = false, "", "", ""
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
	return slices.ContainsFunc(p.infeasible, func(no Infeasible) bool { return no.Kind == kind && no.Target == target })
}

// persistDir is the directory a change's persistence writes in ("" for a
// NetworkManager connection: nmcli writes it).
func persistDir(c Change) string {
	switch {
	case c.Kind == KindSysctl:
		return path.Dir(sysctld.ManagedPath)
	case c.NM != "":
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

// Sysctl keys whose value names something the kernel must have.
const (
	keyCongestion = "net.ipv4.tcp_congestion_control"
	keyQdisc      = "net.core.default_qdisc"
)

// coreQdiscs are registered by the packet scheduler itself
// (net/sched/sch_api.c pktsched_init), in every kernel that has
// net.core.default_qdisc.
var coreQdiscs = map[string]bool{"pfifo_fast": true, "pfifo": true, "bfifo": true, "pfifo_head_drop": true, "mq": true, "noqueue": true}

var reKernelName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// kernelTakes judges a congestion control or default qdisc change on what
// the running kernel has (facts.KernelCaps): ok, when it can take the
// value (with a note when a module will be loaded for it), or why not and
// what to do instead. Without the facts (nil), for any other key, or when
// the facts cannot tell, the change is kept, as before they were gathered.
func kernelTakes(k *facts.KernelCaps, key, value string) (reason, instead, note string) {
	if k == nil || !reKernelName.MatchString(value) {
		return "", "", ""
	}
	switch key {
	case keyCongestion:
		return congestionTakes(k, value)
	case keyQdisc:
		return qdiscTakes(k, value)
	}
	return "", "", ""
}

// kernelView is what one name's module looks like in the facts.
type kernelView struct {
	k        *facts.KernelCaps
	name     string // bbr, fq
	mod      string // tcp_bbr, sch_fq
	sym      string // CONFIG_TCP_CONG_BBR, CONFIG_NET_SCH_FQ
	release  string // the kernel's release, or "the running kernel"
	canLoad  bool   // modules can be loaded (or it is unknown whether)
	builtin  bool   // modules.builtin lists it, or the configuration has it =y
	loadable bool   // modules.dep lists it
}

func newKernelView(k *facts.KernelCaps, name, mod, sym string) kernelView {
	v := kernelView{k: k, name: name, mod: mod, sym: sym, release: "kernel " + k.Release}
	if k.Release == "" {
		v.release = "the running kernel"
	}
	v.canLoad = k.Modules != facts.ModulesNone && k.Modules != facts.ModulesDisabled
	v.builtin = slices.Contains(k.Builtin, mod) || k.Config[sym] == "y"
	v.loadable = slices.Contains(k.Loadable, mod)
	return v
}

// cannotLoad says why this kernel loads no module.
func (v kernelView) cannotLoad() string {
	if v.k.Modules == facts.ModulesDisabled {
		return v.release + " has module loading switched off (kernel.modules_disabled = 1, until the next boot)"
	}
	return v.release + " cannot load modules (built without CONFIG_MODULES: no /proc/modules)"
}

// missing explains, from the module tree and the configuration, why the
// kernel has no module for v ("" when the facts cannot tell).
func (v kernelView) missing() string {
	k := v.k
	cfg := ""
	if k.Config != nil && k.Config[v.sym] == "" {
		cfg = fmt.Sprintf("%s is not set in %s", v.sym, k.ConfigSource)
	}
	switch {
	case !v.canLoad && (cfg != "" || k.BuiltinRead || k.ModuleDir != ""):
		return joinWhy(v.cannotLoad(), cfg)
	case k.ModuleDep:
		return joinWhy(fmt.Sprintf("no %s module for %s (%s/modules.dep lists none)", v.mod, v.release, k.ModuleDir), cfg)
	case k.ModuleDir != "" && slices.Contains(k.Files, v.mod):
		return fmt.Sprintf("%s/%s.ko is there but %s/modules.dep is missing or unreadable, so modprobe cannot find it (run depmod %s)", k.ModuleDir, v.mod, k.ModuleDir, k.Release)
	case k.ModuleDir != "":
		return joinWhy(fmt.Sprintf("no %s module for %s (modules.dep unreadable, no %s.ko* file in %s)", v.mod, v.release, v.mod, k.ModuleDir), cfg)
	case cfg != "":
		return v.release + " is built without it (" + cfg + ")"
	case k.Config != nil && k.Config[v.sym] == "m":
		return fmt.Sprintf("%s=m in %s, but %s has no module tree (no /lib/modules/%s): its modules are not installed", v.sym, k.ConfigSource, v.release, k.Release)
	}
	return ""
}

func joinWhy(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// noTree is "no /lib/modules/RELEASE and no /proc/config.gz".
func (v kernelView) noTree() string {
	return fmt.Sprintf("no /lib/modules/%s and no /proc/config.gz", cmp.Or(v.k.Release, "RELEASE"))
}

// autoloadNote is the note of a change that loads a module.
func (v kernelView) autoloadNote(how string) string {
	return fmt.Sprintf("%s is a module of %s, not loaded now: %s", v.mod, v.release, how)
}

// congestionSymbols are the Kconfig names that are not the upper-cased
// congestion control name.
var congestionSymbols = map[string]string{"highspeed": "HSTCP"}

// congestionTakes: a congestion control is there when
// tcp_available_congestion_control lists it, when it is built in, or when
// a module of the running release can be loaded for it.
func congestionTakes(k *facts.KernelCaps, name string) (reason, instead, note string) {
	sym := cmp.Or(congestionSymbols[name], strings.ToUpper(name))
	v := newKernelView(k, name, "tcp_"+name, "CONFIG_TCP_CONG_"+sym)
	if slices.Contains(k.Congestion, name) || v.builtin {
		return "", "", ""
	}
	if v.loadable && v.canLoad {
		// net/ipv4/tcp_cong.c, tcp_ca_find_autoload: a congestion control
		// not registered is looked up again after request_module("tcp_%s"),
		// "#ifdef CONFIG_MODULES", when the writer is capable(CAP_NET_ADMIN).
		return "", "", v.autoloadNote("writing the sysctl loads it (the kernel calls request_module(\"" + v.mod + "\") for a writer with CAP_NET_ADMIN, net/ipv4/tcp_cong.c)")
	}
	avail := "tcp_available_congestion_control could not be read"
	if k.Congestion != nil {
		avail = fmt.Sprintf("not in tcp_available_congestion_control (%s)", strings.Join(k.Congestion, " "))
	}
	fix := fmt.Sprintf("install and boot a kernel with %s (=y, or =m with its modules installed), then rerun kaudit fix; until then leave %s as it is", v.sym, keyCongestion)
	switch {
	case v.loadable:
		return fmt.Sprintf("%s: %s and %s", name, avail, v.cannotLoad()), fix, ""
	case k.Congestion == nil && k.ModuleDir == "" && k.Config == nil:
		return "", "", "" // nothing to judge on: as before
	}
	if why := v.missing(); why != "" {
		return fmt.Sprintf("%s: %s and %s", name, avail, why), fix, ""
	}
	if k.Congestion != nil {
		return fmt.Sprintf("cannot confirm the kernel has %s: %s, %s", v.mod, avail, v.noTree()),
			fmt.Sprintf("check on the host (modprobe -n -v %s), then set %s = %s yourself", v.mod, keyCongestion, name), ""
	}
	return "", "", ""
}

// qdiscTakes: a queueing discipline is there when the scheduler registers
// it itself, when it is built in, or when a module of the running release
// can be loaded for it. No file lists the qdiscs registered now, so when
// neither a module tree nor a configuration can tell, the change is not
// planned.
func qdiscTakes(k *facts.KernelCaps, name string) (reason, instead, note string) {
	v := newKernelView(k, name, "sch_"+name, "CONFIG_NET_SCH_"+strings.ToUpper(name))
	if coreQdiscs[name] || v.builtin {
		return "", "", ""
	}
	if v.loadable && v.canLoad {
		// net/sched/sch_api.c, qdisc_set_default: a name not registered is
		// looked up again after request_module("sch_%s").
		return "", "", v.autoloadNote("writing the sysctl loads it (the kernel calls request_module(\"" + v.mod + "\"), net/sched/sch_api.c qdisc_set_default)")
	}
	fix := fmt.Sprintf("install and boot a kernel with %s (=y, or =m with its modules installed), then rerun kaudit fix; until then leave %s as it is (since Linux 4.13 TCP paces BBR itself, without fq)", v.sym, keyQdisc)
	if v.loadable {
		return fmt.Sprintf("%s: %s", v.mod, v.cannotLoad()), fix, ""
	}
	if why := v.missing(); why != "" {
		return fmt.Sprintf("%s: not built in and %s", name, why), fix, ""
	}
	return fmt.Sprintf("cannot confirm the kernel has %s: %s", v.mod, v.noTree()),
		fmt.Sprintf("check on the host (modprobe -n -v %s, or grep %s /boot/config-%s), then set %s = %s yourself; or leave it (since Linux 4.13 TCP paces BBR itself, without fq)", v.mod, v.sym, cmp.Or(k.Release, "$(uname -r)"), keyQdisc, name), ""
}

// cannotNIC lists a NIC setting the interface does not allow: not
// planned, the reason and what to do instead in the plan. A second rule
// asking for the same target joins the first entry.
func (p *planner) cannotNIC(rule string, kind ChangeKind, target, to, reason, instead string) {
	for i := range p.infeasible {
		if no := &p.infeasible[i]; no.Kind == kind && no.Target == target {
			no.Rules = appendRule(no.Rules, rule)
			return
		}
	}
	p.infeasible = append(p.infeasible, Infeasible{Host: p.host, Rules: []string{rule}, Kind: kind, Target: target, To: to, Reason: reason, Instead: instead})
}
