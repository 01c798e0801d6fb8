package nicpersist

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ifcfg is RHEL network-scripts: /etc/sysconfig/network-scripts/ifcfg-IF,
// whose ETHTOOL_OPTS ifup runs. The gather picks it only where ifup
// exists and NetworkManager does not manage the interface (on RHEL 9 the
// ifcfg files are NetworkManager's, read by its ifcfg-rh plugin).
type ifcfg struct{}

const ifcfgDir = "/etc/sysconfig/network-scripts/"

func (ifcfg) Name() facts.PersistMechanism { return facts.PersistIfcfg }

func (ifcfg) Owns(p string) bool { return strings.HasPrefix(p, ifcfgDir+"ifcfg-") }

// boot applies an ifcfg file's ETHTOOL_OPTS ("-K eth0 gro on; -G eth0 rx
// 4096"); the legacy form (options for ethtool -s) sets nothing audited.
func (ifcfg) boot(b *builder, in *input) {
	ps := in.ps
	if !in.managedBy(facts.PersistIfcfg) || !strings.HasPrefix(strings.TrimSpace(ps.EthtoolOpts), "-") {
		return
	}
	src := fmt.Sprintf("%s:%d", ps.File, ps.Line)
	b.setFrom(ethtoolCommands(ps.EthtoolOpts, true), []string{in.name}, facts.PersistIfcfg, src, "ETHTOOL_OPTS")
}

// Plan persists in the ifcfg file's ETHTOOL_OPTS, unless it is in the
// legacy form (the udev rule and a manual action instead).
func (ifcfg) Plan(nic facts.NIC, _ map[string]string) Plan {
	ps := nic.Persist
	if pl, ok := editable(nic, ps.File); !ok {
		return pl
	}
	if o := strings.TrimSpace(ps.EthtoolOpts); o != "" && !strings.HasPrefix(o, "-") {
		return Plan{Path: UdevPath, Manual: fmt.Sprintf("%s line %d sets ETHTOOL_OPTS in the legacy form (%q, options for ethtool -s): kaudit persisted %s's settings in %s; to keep them in %s, rewrite it as \"-s %s %s; -G %s ...; -K %s ...\"",
			ps.File, ps.Line, o, nic.Name, UdevPath, ps.File, nic.Name, o, nic.Name, nic.Name)}
	}
	return Plan{Path: ps.File, Note: fmt.Sprintf("persisted in ETHTOOL_OPTS of %s (other lines kept byte for byte): applied at the interface's next ifup", ps.File)}
}

var rePersistFile = regexp.MustCompile(`^/[A-Za-z0-9_./+@,=-]*$`)

// editable reports whether kaudit may edit file for nic, else the udev
// rule's plan with a warning.
func editable(nic facts.NIC, file string) (Plan, bool) {
	if rePersistFile.MatchString(file) {
		return Plan{}, true
	}
	return Plan{Path: UdevPath, Warn: fmt.Sprintf("%s: %s cannot be edited by kaudit (unusual characters in its path): persisting in %s", nic.Name, file, UdevPath)}, false
}

func (ifcfg) Render(f File, ss []Setting, env Env) ([]byte, bool, error) {
	if err := mustExist(f); err != nil {
		return nil, false, err
	}
	iface, err := oneIface(f.Path, ss)
	if err != nil {
		return nil, false, err
	}
	content, err := EditIfcfg(f.Content, iface, ss, env.RunID)
	return content, false, err
}

var reEthtoolOpts = regexp.MustCompile(`^([ \t]*)ETHTOOL_OPTS=(.*?)(\r?)$`)

// splitEthtoolOpts splits an ifcfg ETHTOOL_OPTS value (one level of
// quotes removed) into its ethtool commands ("-K eth0 gro off; -G eth0 rx
// 4096"). Only plain values in the modern form (each command starting with
// an option) are accepted.
func splitEthtoolOpts(value string) ([][]string, error) {
	value = strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	if strings.ContainsAny(value, "$`\\\"'#") {
		return nil, fmt.Errorf("ETHTOOL_OPTS %q: kaudit edits only plain values (no quotes, expansions or comments inside)", value)
	}
	value = strings.TrimSpace(value)
	if value != "" && !strings.HasPrefix(value, "-") {
		return nil, fmt.Errorf("ETHTOOL_OPTS %q is in the legacy form (options for ethtool -s): kaudit does not rewrite it", value)
	}
	var cmds [][]string
	for _, c := range strings.Split(value, ";") {
		if f := strings.Fields(c); len(f) > 0 {
			cmds = append(cmds, f)
		}
	}
	return cmds, nil
}

// setEthtoolOpt sets s in the ETHTOOL_OPTS commands: in place when a
// command for iface already names the setting, else appended to iface's
// -K / -G command, else as a new command. changed: the value differed.
func setEthtoolOpt(cmds [][]string, iface string, s Setting) (out [][]string, changed bool) {
	opts := map[string]bool{"-K": true, "--features": true, "--offload": true}
	if s.Ring() {
		opts = map[string]bool{"-G": true, "--set-ring": true}
	}
	done := false
	for _, c := range cmds {
		if len(c) < 2 || !opts[c[0]] || c[1] != iface {
			continue
		}
		for i := 2; i+1 < len(c); i += 2 {
			if c[i] == s.Setting {
				if c[i+1] != s.Value {
					c[i+1], changed = s.Value, true
				}
				done = true
			}
		}
	}
	if done {
		return cmds, changed
	}
	for i, c := range cmds {
		if len(c) >= 2 && opts[c[0]] && c[1] == iface {
			cmds[i], done = append(c, s.Setting, s.Value), true
			break
		}
	}
	if !done {
		cmds = append(cmds, []string{"-" + s.flag(), iface, s.Setting, s.Value})
	}
	return cmds, true
}

// EditIfcfg sets the settings in the ETHTOOL_OPTS assignment of an ifcfg
// file (the last one, which wins when the file is sourced): an existing
// "-G IF …" / "-K IF …" command (also --set-ring, --features, --offload)
// gets the values, else a command is added ("; "-separated). Every other
// line is kept byte for byte; without an assignment one is appended. An
// assignment in the legacy form (options for ethtool -s, not starting with
// "-") or with shell expansions is refused.
func EditIfcfg(content []byte, iface string, set []Setting, runID string) ([]byte, error) {
	if err := Check(set); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(content), "\n")
	at := -1
	var indent, cr, value string
	for i, l := range lines {
		if m := reEthtoolOpts.FindStringSubmatch(strings.TrimSuffix(l, "\n")); m != nil {
			at, indent, value, cr = i, m[1], m[2], m[3]
		}
	}
	cmds, err := splitEthtoolOpts(value)
	if err != nil {
		return nil, err
	}
	changed := false
	for _, s := range set {
		var c bool
		cmds, c = setEthtoolOpt(cmds, iface, s)
		changed = changed || c
	}
	if !changed {
		return content, nil
	}
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		parts[i] = strings.Join(c, " ")
	}
	assign := "ETHTOOL_OPTS=\"" + strings.Join(parts, "; ") + "\""
	if at >= 0 {
		nl := ""
		if strings.HasSuffix(lines[at], "\n") {
			nl = "\n"
		}
		lines[at] = indent + assign + cr + nl
		return []byte(strings.Join(lines, "")), nil
	}
	out := string(content)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "# ETHTOOL_OPTS added by kaudit fix, run " + runID + "\n" + assign + "\n"), nil
}
