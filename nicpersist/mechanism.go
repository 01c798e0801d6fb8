// Package nicpersist owns how a host keeps an interface's ring sizes and
// offloads across a reboot. Each way is one Mechanism in a file of its
// own, as goss's system/service_*.go are: link.go (systemd .link files),
// udev.go (udev rules running ethtool; kaudit's fallback), ifcfg.go (RHEL
// network-scripts ETHTOOL_OPTS), ifupdown.go (Debian
// /etc/network/interfaces) and nm.go (NetworkManager connections). Each
// reads what it sets at boot from the gather's persistence lines (Boot),
// plans where kaudit persists a change (PlanFor) and renders the file it
// writes (Render). A run restores every mechanism the same way: its files
// byte for byte from the run's backup, a NetworkManager connection's
// properties as journalled running values (nm.go: NMProperty).
package nicpersist

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
)

// Mechanism is one way a host persists NIC settings.
type Mechanism interface {
	Name() facts.PersistMechanism
	// detect fills p and reports true when the mechanism manages the
	// interface (Detect).
	detect(p *facts.NICPersist, in *input) bool
	// boot adds what the mechanism sets on the interface at boot.
	boot(b *builder, in *input)
	// Plan says where nic's settings set (setting → value) are persisted
	// when the host manages nic with this mechanism.
	Plan(nic facts.NIC, set map[string]string) Plan
	// Owns reports whether kaudit persists through file p with it.
	Owns(p string) bool
	// Render computes the new content of f persisting ss; hold: f
	// already holds them, nothing to write.
	Render(f File, ss []Setting, env Env) (content []byte, hold bool, err error)
}

// all are the mechanisms in the order the boot applies them (a later
// one wins): .link files, udev rules, then what brings the interface up.
var all = []Mechanism{link{}, udev{}, ifcfg{}, ifupdown{}, nm{}}

// Of is the mechanism named m (the udev rule for an unknown name).
func Of(m facts.PersistMechanism) Mechanism {
	for _, x := range all {
		if x.Name() == m {
			return x
		}
	}
	return udev{}
}

// ForPath is the mechanism kaudit persists through file p with, nil
// when none does.
func ForPath(p string) Mechanism {
	for _, x := range all {
		if x.Owns(p) {
			return x
		}
	}
	return nil
}

// noFile is Owns and Render of a mechanism kaudit writes no file of.
type noFile struct{}

func (noFile) Owns(string) bool { return false }

func (noFile) Render(f File, _ []Setting, _ Env) ([]byte, bool, error) {
	return nil, false, fmt.Errorf("%s: kaudit does not write NIC settings there", f.Path)
}

// Plan is where one interface's settings are persisted.
type Plan struct {
	Path  string // the file, or `NetworkManager connection "NAME"`
	Match string // a .link file's [Match] keys
	NM    string // the NetworkManager connection's UUID
	Note  string // added to each change's note
	// Manual: how to persist in the host's own mechanism when kaudit fell
	// back to the udev rule; Warn: why it fell back, when not Manual.
	Manual, Warn string
	// Beaten: the settings (→ why) the udev rule would not persist,
	// something applied after it at boot setting another value.
	Beaten map[string]string
}

// PlanFor picks where nic's settings set are persisted: through the
// mechanism the gather found (nic.Persist), else the udev rule.
func PlanFor(nic facts.NIC, set map[string]string) Plan {
	pl := udevPlan
	if nic.Persist != nil {
		pl = Of(nic.Persist.Mechanism).Plan(nic, set)
	}
	if pl.Path != UdevPath || nic.Boot == nil {
		return pl
	}
	for s, want := range set {
		bv, ok := nic.Boot.Settings[s]
		if ok && bv.Value != want && bv.Mechanism != facts.PersistUdev && bv.Mechanism != facts.PersistSystemdLink {
			if pl.Beaten == nil {
				pl.Beaten = map[string]string{}
			}
			pl.Beaten[s] = fmt.Sprintf("%s sets %s %s at boot, after kaudit's udev rule would: it wins", bv.Source, s, bv.Value)
		}
	}
	return pl
}

// Setting is one persisted NIC setting: rx/tx (a ring size) or an
// offload (on/off).
type Setting struct{ Iface, Setting, Value string }

// Ring reports whether s is a ring size (ethtool -G), else an offload (-K).
func (s Setting) Ring() bool { return isRing(s.Setting) }

// isRing reports whether setting is a ring size (rx, tx), else an offload.
func isRing(setting string) bool { return setting == "rx" || setting == "tx" }

func (s Setting) flag() string {
	if s.Ring() {
		return "G"
	}
	return "K"
}

// File is a persistence file as the read step found it.
type File struct {
	Path    string
	Content []byte
	Exists  bool
}

// Env is what a rendering needs besides the settings: the host's
// ethtool, the run id (checked by the caller), a .link file's match.
type Env struct{ Ethtool, RunID, Match string }

var (
	reRingValue = regexp.MustCompile(`^[1-9][0-9]{0,6}$`)
	reEthtool   = regexp.MustCompile(`^/[A-Za-z0-9_./-]+$`)
)

// CheckValue validates a ring size or on/off for setting.
func CheckValue(setting, target, v string) error {
	if isRing(setting) {
		if !reRingValue.MatchString(v) {
			return fmt.Errorf("%s: ring size %q is not a positive number", target, v)
		}
	} else if v != "on" && v != "off" {
		return fmt.Errorf("%s: %q is not on or off", target, v)
	}
	return nil
}

// Check validates settings for a file: interface names, settings kaudit
// knows, their values.
func Check(ss []Setting) error {
	for _, s := range ss {
		target := s.Iface + " " + s.Setting
		if !safe.Iface(s.Iface) || strings.HasPrefix(s.Iface, "nm:") || s.Iface == "." || s.Iface == ".." {
			return fmt.Errorf("NIC target %q: want \"IFACE SETTING\" with a valid interface name", target)
		}
		if _, ok := facts.OffloadName(s.Setting); !ok && !s.Ring() {
			return fmt.Errorf("NIC target %q: setting must be rx, tx, tso, gso, gro or lro", target)
		}
		if err := CheckValue(s.Setting, target, s.Value); err != nil {
			return err
		}
	}
	return nil
}

func checkEthtool(ethtool string) error {
	if !reEthtool.MatchString(ethtool) || strings.Contains(ethtool, "..") {
		return fmt.Errorf("ethtool path %q: want an absolute path of [A-Za-z0-9_./-]", ethtool)
	}
	return nil
}

// oneIface returns the interface of settings that must all be for one.
func oneIface(p string, ss []Setting) (string, error) {
	for _, s := range ss[1:] {
		if s.Iface != ss[0].Iface {
			return "", fmt.Errorf("%s: settings of %s and %s in one file", p, ss[0].Iface, s.Iface)
		}
	}
	return ss[0].Iface, nil
}

// Detect decides what persists interface name's settings from the
// gather's persistence lines for it (npersist in gather.sh): the first
// mechanism of NetworkManager (it manages the device with a connection),
// ifcfg and ifupdown (both only where ifup exists), systemd .link files
// (99-default.link exists, udevadm is at least MinLinkRingsVersion,
// /etc/systemd/network exists); else the udev rule.
func Detect(name, driver string, lines []string) *facts.NICPersist {
	in := &input{name: name, driver: driver, lines: lines}
	p := &facts.NICPersist{Mechanism: facts.PersistUdev, NMVersion: in.last("@nm-version")}
	if mac := strings.ToLower(in.last("@mac")); reMAC.MatchString(mac) && mac != "00:00:00:00:00:00" {
		p.MAC = mac
	}
	for _, m := range []Mechanism{nm{}, ifcfg{}, ifupdown{}, link{}} {
		if m.detect(p, in) {
			break
		}
	}
	return p
}

var reMAC = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// Boot reads, from an interface's persistence lines (npersist in
// gather.sh) and the mechanism the gather chose (ps), what the host sets
// on the interface when it next appears, in the order the boot applies
// it (all; a later one wins). Anything found that cannot be settled is
// listed in Unsure, never guessed.
func Boot(name, driver string, ps *facts.NICPersist, lines []string) *facts.NICBoot {
	in := &input{name: name, driver: driver, ps: ps, lines: lines}
	if ps != nil {
		in.mac = ps.MAC
	}
	b := &builder{boot: &facts.NICBoot{Settings: map[string]facts.NICBootValue{}}}
	for _, m := range all {
		m.boot(b, in)
	}
	if len(b.boot.Settings) == 0 {
		b.boot.Settings = nil
	}
	return b.boot
}

// input is one interface's persistence lines and what they are read for.
type input struct {
	name, driver, mac string
	ps                *facts.NICPersist
	lines             []string
}

// each calls f with the rest of every line whose key is key.
func (in *input) each(key string, f func(val string)) {
	for _, line := range in.lines {
		if k, val, _ := strings.Cut(line, " "); k == key {
			f(val)
		}
	}
}

// last is the value of the last line whose key is key, spaces trimmed.
func (in *input) last(key string) (v string) {
	in.each(key, func(val string) { v = strings.TrimSpace(val) })
	return v
}

// managedBy reports whether the gather found the interface managed by m.
func (in *input) managedBy(m facts.PersistMechanism) bool {
	return in.ps != nil && in.ps.Mechanism == m
}

type builder struct{ boot *facts.NICBoot }

func (b *builder) unsure(format string, args ...any) {
	b.boot.Unsure = append(b.boot.Unsure, fmt.Sprintf(format, args...))
}

// set records a setting from source; a later call wins over an earlier.
func (b *builder) set(setting, value string, mechanism facts.PersistMechanism, source string) {
	v := facts.NICBootValue{Value: value, Mechanism: mechanism, Source: source}
	if old, ok := b.boot.Settings[setting]; ok {
		v.Overridden = append(old.Overridden, old.Source+"="+old.Value)
	}
	b.boot.Settings[setting] = v
}

// ethtoolSetting is the offload an ethtool -K keyword (or the long name
// ethtool -k prints) names, if kaudit audits it.
func ethtoolSetting(k string) (string, bool) {
	if s, ok := facts.OffloadKeyword(k); ok {
		return s, true
	}
	_, ok := facts.OffloadName(k)
	return k, ok
}

// ethtoolCmd is what one ethtool command line sets: setting → value, for
// the interface word it names (literal, or a substitution: "%k").
type ethtoolCmd struct {
	iface string
	set   [][2]string
	bad   string // why the command could not be read
}

// ethtoolCommands finds the ethtool -G / -K commands in a shell-ish
// command line (udev RUN, ifupdown post-up, ETHTOOL_OPTS without the
// program name when bare): commands separated by ; && || |, quotes
// removed from words.
func ethtoolCommands(line string, bare bool) []ethtoolCmd {
	var out []ethtoolCmd
	repl := strings.NewReplacer("&&", ";", "||", ";", "|", ";")
	for _, part := range strings.Split(repl.Replace(line), ";") {
		words := strings.Fields(strings.NewReplacer("'", " ", `"`, " ").Replace(part))
		i := 0
		if !bare {
			for i < len(words) && path.Base(words[i]) != "ethtool" {
				i++
			}
			i++ // past the program
		}
		if i+1 >= len(words) {
			continue
		}
		flag, iface := words[i], words[i+1]
		ring := flag == "-G" || flag == "--set-ring"
		if !ring && flag != "-K" && flag != "--features" && flag != "--offload" {
			continue
		}
		out = append(out, ethtoolArgs(iface, ring, words[i+2:]))
	}
	return out
}

// ethtoolArgs reads the KEY VALUE pairs of one ethtool -G or -K command.
func ethtoolArgs(iface string, ring bool, rest []string) ethtoolCmd {
	c := ethtoolCmd{iface: iface}
	for j := 0; j+1 < len(rest); j += 2 {
		k, v := rest[j], rest[j+1]
		switch {
		case ring && isRing(k):
			if !reRingValue.MatchString(v) {
				c.bad = fmt.Sprintf("%s %s is not a ring size", k, v)
				continue
			}
			c.set = append(c.set, [2]string{k, v})
		case !ring:
			s, ours := ethtoolSetting(k)
			if !ours {
				continue
			}
			if v != "on" && v != "off" {
				c.bad = fmt.Sprintf("%s %s is not on or off", k, v)
				continue
			}
			c.set = append(c.set, [2]string{s, v})
		}
	}
	if len(rest)%2 == 1 {
		c.bad = fmt.Sprintf("odd argument %q", rest[len(rest)-1])
	}
	return c
}

// setFrom records, for the commands that name the interface (or one of
// its aliases), what they set, from source.
func (b *builder) setFrom(cmds []ethtoolCmd, names []string, m facts.PersistMechanism, source, what string) {
	for _, c := range cmds {
		if !slices.Contains(names, c.iface) {
			continue
		}
		if c.bad != "" {
			b.unsure("%s: %s not read (%s)", source, what, c.bad)
			continue
		}
		for _, kv := range c.set {
			b.set(kv[0], kv[1], m, source)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
