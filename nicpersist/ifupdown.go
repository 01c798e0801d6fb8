package nicpersist

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// ifupdown is Debian's /etc/network/interfaces (and interfaces.d/*):
// the interface's "iface IF" stanza, run by ifup. kaudit adds post-up
// ethtool lines under it.
type ifupdown struct{}

const (
	interfacesDir = "/etc/network/interfaces.d/"
	interfaces    = "/etc/network/interfaces"
)

func (ifupdown) Name() facts.PersistMechanism { return facts.PersistIfupdown }

func (ifupdown) Owns(p string) bool {
	return p == interfaces || (strings.HasPrefix(p, interfacesDir) && path.Dir(p)+"/" == interfacesDir)
}

// detect: the first "iface IF" stanza (line and file), and ifup.
func (ifupdown) detect(p *facts.NICPersist, in *input) bool {
	file, line := "", 0
	in.each("@iface", func(val string) {
		n, f, ok := strings.Cut(val, " ")
		if ln, err := strconv.Atoi(n); ok && err == nil && file == "" {
			line, file = ln, f
		}
	})
	if file == "" || in.last("@ifup") == "" {
		return false
	}
	p.Mechanism, p.File, p.Line = facts.PersistIfupdown, file, line
	return true
}

// ifupdownOpts are the ethtool package's ifupdown options (its
// if-pre-up.d hook applies them).
var ifupdownOpts = map[string]string{
	"hardware-dma-ring-rx": "rx", "hardware-dma-ring-tx": "tx",
	"offload-tso": "tso", "offload-gso": "gso", "offload-gro": "gro", "offload-lro": "lro",
}

// boot applies the "iface IF" stanzas' options: the ethtool package's
// hardware-dma-ring-* / offload-* (its hook runs them first, at pre-up),
// then ethtool commands in pre-up, up and post-up, in order.
func (ifupdown) boot(b *builder, in *input) {
	if !in.managedBy(facts.PersistIfupdown) {
		return
	}
	hook := false
	in.each("@ifupdown-hook", func(string) { hook = true })
	var cmds []string
	in.each("@iface-opt", func(o string) {
		if !b.ifupdownOpt(o, hook) {
			cmds = append(cmds, o)
		}
	})
	names := []string{in.name, "$IFACE", "${IFACE}"}
	for _, o := range cmds {
		loc, text, _ := strings.Cut(o, " ")
		f := strings.Fields(text)
		if len(f) > 0 {
			b.setFrom(ethtoolCommands(strings.Join(f[1:], " "), false), names, facts.PersistIfupdown, loc, "ethtool command")
		}
	}
}

// ifupdownOpt records one of the ethtool package's options (o: "LOC
// TEXT"); false when o is not one.
func (b *builder) ifupdownOpt(o string, hook bool) bool {
	loc, text, _ := strings.Cut(o, " ")
	f := strings.Fields(text)
	if len(f) == 0 {
		return true
	}
	s, ok := ifupdownOpts[f[0]]
	if !ok {
		return false
	}
	v := ""
	if len(f) == 2 {
		v = f[1]
	}
	switch {
	case !hook:
		b.unsure("%s: %s without the ethtool package's ifupdown hook (/etc/network/if-pre-up.d/ethtool): it sets nothing", loc, f[0])
	case CheckValue(s, "", v) != nil:
		b.unsure("%s: %q not read", loc, strings.TrimSpace(text))
	default:
		b.set(s, v, facts.PersistIfupdown, loc)
	}
	return true
}

// Plan persists as post-up lines in the interface's stanza.
func (ifupdown) Plan(nic facts.NIC, _ map[string]string) Plan {
	ps := nic.Persist
	if pl, ok := editable(nic, ps.File); !ok {
		return pl
	}
	return Plan{Path: ps.File, Note: fmt.Sprintf("persisted as post-up lines in the \"iface %s\" stanza of %s (line %d; other lines kept byte for byte): applied at the interface's next ifup", nic.Name, ps.File, ps.Line)}
}

func (ifupdown) Render(f File, ss []Setting, env Env) ([]byte, bool, error) {
	if !f.Exists {
		return nil, false, fmt.Errorf("%s does not exist on the host: kaudit edits it, it does not create it", f.Path)
	}
	content, err := EditInterfaces(f.Content, ss, env.Ethtool, env.RunID)
	return content, false, err
}

// stanzaWords start a new stanza (or end the options of one) in
// interfaces(5).
var stanzaWords = map[string]bool{"iface": true, "mapping": true, "auto": true, "source": true, "source-directory": true, "source-dir": true, "no-auto-down": true, "no-scripts": true, "rename": true, "template": true}

// ifaceStanza finds the "iface NAME" stanza in lines: its first line,
// its last option line, and the indent of its options ("    " when it
// has none).
func ifaceStanza(lines []string, iface string) (start, last int, indent string, err error) {
	start = -1
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "iface" && f[1] == iface {
			start = i
			break
		}
	}
	if start < 0 {
		return 0, 0, "", fmt.Errorf("no \"iface %s\" stanza any more: nothing changed, re-run", iface)
	}
	last = start // last option line of the stanza
	for i := start + 1; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if stanzaWords[f[0]] || strings.HasPrefix(f[0], "allow-") {
			break
		}
		if last == start {
			indent = lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		}
		last = i
	}
	return start, last, cmp.Or(indent, "    "), nil
}

// EditInterfaces adds, under the first "iface IF" stanza, one line per
// setting: "post-up ETHTOOL -G IF rx 4096 || true" ("|| true": ethtool
// fails when nothing changes, which must not fail ifup), or updates the
// value of such a line already there (an earlier run). Every other line
// is kept byte for byte.
func EditInterfaces(content []byte, set []Setting, ethtool, runID string) ([]byte, error) {
	if err := checkEthtool(ethtool); err != nil {
		return nil, err
	}
	if err := Check(set); err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return content, nil
	}
	iface, err := oneIface("interfaces", set)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(content), "\n")
	start, last, indent, err := ifaceStanza(lines, iface)
	if err != nil {
		return nil, err
	}
	reOurs := regexp.MustCompile(`^([ \t]*)post-up[ \t]+/[A-Za-z0-9_./-]+[ \t]+-([GK])[ \t]+` + regexp.QuoteMeta(iface) + `[ \t]+([a-z]+)[ \t]+([a-z0-9]+)([ \t]+\|\|[ \t]+true)?[ \t]*(\r?)$`)
	line := func(ind string, s Setting) string {
		return fmt.Sprintf("%spost-up %s -%s %s %s %s || true", ind, ethtool, s.flag(), iface, s.Setting, s.Value)
	}
	changed := false
	var add []string
	for _, s := range set {
		found := false
		for i := start + 1; i <= last; i++ {
			body := strings.TrimSuffix(lines[i], "\n")
			m := reOurs.FindStringSubmatch(body)
			if m == nil || m[3] != s.Setting || m[2] != s.flag() {
				continue
			}
			found = true
			if m[4] != s.Value {
				lines[i] = line(m[1], s) + m[6] + strings.TrimPrefix(lines[i], body)
				changed = true
			}
		}
		if !found {
			add = append(add, line(indent, s)+"\n")
		}
	}
	if len(add) > 0 {
		changed = true
		ins := append([]string{"# post-up lines added by kaudit fix, run " + runID + "\n"}, add...)
		if !strings.HasSuffix(lines[last], "\n") {
			lines[last] += "\n"
		}
		lines = append(lines[:last+1], append(ins, lines[last+1:]...)...)
	}
	if !changed {
		return content, nil
	}
	return []byte(strings.Join(lines, "")), nil
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
