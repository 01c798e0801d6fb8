package parse

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// NICBoot reads, from an interface's persistence lines (npersist in
// gather.sh) and the mechanism NICPersist chose, what the host sets on
// the interface when it next appears, in the order the boot applies it
// (a later one wins):
//
//  1. the first matching systemd .link file (by file name across
//     /etc/systemd/network, /run, /usr/lib, /lib; a name in an earlier
//     directory, or linked to /dev/null, masks a later one): its
//     RxBufferSize=, TxBufferSize= (systemd ≥ 244), GenericReceiveOffload=,
//     TCPSegmentationOffload=, GenericSegmentationOffload=,
//     LargeReceiveOffload= (≥ 232); only when udevadm reports a version;
//  2. udev rules that RUN ethtool -G / -K for it (rule files by name,
//     lines in order; the rule's ACTION, SUBSYSTEM, KERNEL, NAME,
//     ATTR{address} and DRIVERS/DRIVER matches evaluated);
//  3. what brings the interface up, by mechanism: ifcfg's ETHTOOL_OPTS,
//     ifupdown's hardware-dma-ring-* / offload-* options (with the
//     ethtool package's hook) and ethtool commands in pre-up/up/post-up,
//     or the NetworkManager connection's ethtool.* properties.
//
// Anything found that cannot be settled is listed in Unsure, never
// guessed.
func NICBoot(name, driver string, ps *facts.NICPersist, lines []string) *facts.NICBoot {
	b := &bootBuilder{boot: &facts.NICBoot{Settings: map[string]facts.NICBootValue{}}}
	mac := ""
	if ps != nil {
		mac = ps.MAC
	}
	var links []linkFile
	var rules []udevLine
	udevVersion, hook := 0, false
	nulled := map[string]bool{}
	var ifaceOpts []string
	nm := map[string]string{}
	for _, line := range lines {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "@udev-version":
			udevVersion, _ = strconv.Atoi(strings.TrimSpace(val))
		case "@link":
			links = append(links, linkFile{path: strings.TrimSpace(val)})
		case "@link-line":
			if len(links) > 0 {
				n, text, _ := strings.Cut(val, " ")
				ln, err := strconv.Atoi(n)
				if err == nil {
					links[len(links)-1].lines = append(links[len(links)-1].lines, numbered{ln, text})
				}
			}
		case "@link-null":
			nulled[path.Base(strings.TrimSpace(val))] = true
		case "@udev-rule":
			loc, text, _ := strings.Cut(val, " ")
			rules = append(rules, udevLine{loc: loc, text: text})
		case "@ifupdown-hook":
			hook = true
		case "@iface-opt":
			ifaceOpts = append(ifaceOpts, val)
		case "@nm-ethtool":
			s, v, _ := strings.Cut(val, " ")
			nm[s] = strings.TrimSpace(v)
		}
	}
	if udevVersion > 0 {
		b.link(links, nulled, name, driver, mac, udevVersion)
	} else if len(links) > 0 {
		b.unsure(".link files exist but udevadm was not found: not counted")
	}
	b.udev(rules, name, driver, mac)
	if ps != nil {
		switch ps.Mechanism {
		case facts.PersistIfcfg:
			if ps.EthtoolOpts != "" {
				b.ifcfg(ps, name)
			}
		case facts.PersistIfupdown:
			b.ifupdown(ifaceOpts, hook, name)
		case facts.PersistNetworkManager:
			b.networkManager(nm, ps.Connection)
		}
	}
	if len(b.boot.Settings) == 0 {
		b.boot.Settings = nil
	}
	return b.boot
}

type numbered struct {
	n    int
	text string
}

type linkFile struct {
	path  string
	lines []numbered
}

type udevLine struct{ loc, text string }

type bootBuilder struct{ boot *facts.NICBoot }

func (b *bootBuilder) unsure(format string, args ...any) {
	b.boot.Unsure = append(b.boot.Unsure, fmt.Sprintf(format, args...))
}

// set records a setting from source; a later call wins over an earlier.
func (b *bootBuilder) set(setting, value string, mechanism facts.PersistMechanism, source string) {
	v := facts.NICBootValue{Value: value, Mechanism: mechanism, Source: source}
	if old, ok := b.boot.Settings[setting]; ok {
		v.Overridden = append(old.Overridden, old.Source+"="+old.Value)
	}
	b.boot.Settings[setting] = v
}

// linkSince is the first systemd version whose .link files take a
// setting (its [Link] key: facts.LinkKey).
func linkSince(setting string) int {
	if setting == "rx" || setting == "tx" {
		return MinLinkRingsVersion
	}
	return 232
}

var reRingValue = regexp.MustCompile(`^[1-9][0-9]{0,6}$`)

// linkDirRank orders the .link directories: an earlier one masks a file
// of the same name in a later one.
func linkDirRank(p string) int {
	for i, d := range []string{"/etc/systemd/network/", "/run/systemd/network/", "/usr/lib/systemd/network/", "/lib/systemd/network/"} {
		if strings.HasPrefix(p, d) {
			return i
		}
	}
	return 9
}

// link applies the first .link file that matches the interface.
func (b *bootBuilder) link(links []linkFile, nulled map[string]bool, name, driver, mac string, version int) {
	sort.SliceStable(links, func(i, j int) bool {
		bi, bj := path.Base(links[i].path), path.Base(links[j].path)
		if bi != bj {
			return bi < bj
		}
		return linkDirRank(links[i].path) < linkDirRank(links[j].path)
	})
	seen := map[string]bool{}
	for _, lf := range links {
		base := path.Base(lf.path)
		if seen[base] || nulled[base] {
			continue
		}
		seen[base] = true
		match, keys, why := parseLinkFile(lf.lines)
		if why != "" {
			b.unsure("%s: %s", lf.path, why)
			continue
		}
		ok, undecided := linkMatches(match, name, driver, mac)
		if undecided != "" {
			b.unsure("%s: [Match] %s= not evaluated by kaudit: if it matches %s, its settings apply instead of any later .link", lf.path, undecided, name)
			continue
		}
		if !ok {
			continue
		}
		for _, k := range sortedMapKeys(keys) {
			setting, _ := facts.LinkSetting(k)
			kv := keys[k]
			src := fmt.Sprintf("%s:%d", lf.path, kv.n)
			if version < linkSince(setting) {
				b.unsure("%s: %s= needs systemd %d, udevadm is %d: ignored", src, k, linkSince(setting), version)
				continue
			}
			v, ok := linkValue(setting, kv.text)
			if !ok {
				b.unsure("%s: %s=%s is not a value systemd takes: ignored", src, k, kv.text)
				continue
			}
			b.set(setting, v, facts.PersistSystemdLink, src)
		}
		return // only the first matching .link applies
	}
}

// parseLinkFile reads a .link file's [Match] keys (each key's words,
// assignments accumulated, an empty one resetting) and its [Link]
// settings (the last assignment of each).
func parseLinkFile(lines []numbered) (match map[string][]string, keys map[string]numbered, why string) {
	match, keys = map[string][]string{}, map[string]numbered{}
	section := ""
	for _, l := range lines {
		t := strings.TrimSpace(strings.TrimSuffix(l.text, "\r"))
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
		case strings.HasPrefix(t, "["):
			if !strings.HasSuffix(t, "]") {
				return nil, nil, fmt.Sprintf("line %d %q is not a section header", l.n, t)
			}
			section = t
		default:
			k, v, ok := strings.Cut(t, "=")
			if !ok {
				return nil, nil, fmt.Sprintf("line %d %q is not KEY=VALUE", l.n, t)
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch section {
			case "[Match]":
				if v == "" {
					delete(match, k)
				} else {
					match[k] = append(match[k], strings.Fields(v)...)
				}
			case "[Link]":
				if _, ours := facts.LinkSetting(k); ours {
					keys[k] = numbered{l.n, v}
				}
			}
		}
	}
	return match, keys, ""
}

// linkMatches evaluates a .link file's [Match] section: every key must
// match (an empty section matches every interface). undecided names a key
// kaudit does not evaluate.
func linkMatches(match map[string][]string, name, driver, mac string) (ok bool, undecided string) {
	ok = true
	for _, k := range sortedMapKeys(match) {
		words := match[k]
		invert := strings.HasPrefix(words[0], "!")
		var hit bool
		switch k {
		case "OriginalName":
			hit = anyGlob(words, name)
		case "Driver":
			hit = driver != "" && anyGlob(words, driver)
		case "MACAddress", "PermanentMACAddress":
			for _, w := range words {
				if mac != "" && strings.EqualFold(strings.TrimPrefix(w, "!"), mac) {
					hit = true
				}
			}
		default:
			return false, k
		}
		if hit == invert {
			ok = false
		}
	}
	return ok, ""
}

func anyGlob(words []string, s string) bool {
	for _, w := range words {
		if m, err := path.Match(strings.TrimPrefix(w, "!"), s); m && err == nil {
			return true
		}
	}
	return false
}

// linkValue reads a .link value: a ring size ("max" kept as is) or a
// boolean (systemd's parse_boolean) as on/off.
func linkValue(setting, v string) (string, bool) {
	if setting == "rx" || setting == "tx" {
		if v == "max" || reRingValue.MatchString(v) {
			return v, true
		}
		return "", false
	}
	switch strings.ToLower(v) {
	case "1", "yes", "y", "true", "t", "on":
		return "on", true
	case "0", "no", "n", "false", "f", "off":
		return "off", true
	}
	return "", false
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
		c := ethtoolCmd{iface: iface}
		rest := words[i+2:]
		for j := 0; j+1 < len(rest); j += 2 {
			k, v := rest[j], rest[j+1]
			switch {
			case ring && (k == "rx" || k == "tx"):
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
		out = append(out, c)
	}
	return out
}

// udevSubst are the udev substitutions for the device's name.
var udevSubst = map[string]bool{"%k": true, "$kernel": true, "$name": true}

var reUdevKey = regexp.MustCompile(`^\s*([A-Za-z_]+)(\{[^}]*\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)`)

// udev applies the udev rules that run ethtool for the interface.
func (b *bootBuilder) udev(rules []udevLine, name, driver, mac string) {
	sort.SliceStable(rules, func(i, j int) bool {
		fi, li := splitLoc(rules[i].loc)
		fj, lj := splitLoc(rules[j].loc)
		if path.Base(fi) != path.Base(fj) {
			return path.Base(fi) < path.Base(fj)
		}
		return li < lj
	})
	for _, r := range rules {
		text := strings.TrimSuffix(r.text, "\r")
		if t := strings.TrimSpace(text); t == "" || t[0] == '#' {
			continue
		}
		continued := text != strings.TrimLeft(text, " \t") // a continuation line: its matches are on the line before
		rest := text
		matches, undecided := true, ""
		var runs []string
		for strings.TrimSpace(rest) != "" && strings.TrimSpace(rest) != `\` {
			m := reUdevKey.FindStringSubmatchIndex(rest)
			if m == nil {
				b.unsure("%s: udev rule not read (%q)", r.loc, strings.TrimSpace(text))
				matches, runs = false, nil
				break
			}
			key, attr, op, val := rest[m[2]:m[3]], "", rest[m[6]:m[7]], rest[m[8]:m[9]]
			if m[4] >= 0 {
				attr = rest[m[4]:m[5]]
			}
			rest = rest[m[1]:]
			if key == "RUN" && (op == "+=" || op == "=" || op == ":=") {
				runs = append(runs, val)
				continue
			}
			if op != "==" && op != "!=" {
				continue // an assignment
			}
			var hit bool
			switch {
			case key == "ACTION":
				hit = udevGlob(val, "add")
			case key == "SUBSYSTEM" || key == "SUBSYSTEMS":
				hit = udevGlob(val, "net")
			case key == "KERNEL" || key == "NAME":
				hit = udevGlob(val, name)
			case key == "DRIVERS" || key == "DRIVER":
				hit = driver != "" && udevGlob(val, driver)
			case key == "ATTR" && attr == "{address}":
				hit = mac != "" && udevGlob(strings.ToLower(val), mac)
			default:
				if undecided == "" {
					undecided = key + attr
				}
				continue
			}
			if hit != (op == "==") {
				matches = false
			}
		}
		for _, run := range runs {
			for _, c := range ethtoolCommands(run, false) {
				literal := c.iface == name
				if !literal && !udevSubst[c.iface] {
					continue // another interface
				}
				switch {
				case !literal && continued:
					b.unsure("%s: ethtool %s on a continuation line: its matches were not read", r.loc, c.iface)
					continue
				case !matches:
					continue
				case undecided != "":
					b.unsure("%s: udev match %s not evaluated by kaudit: the rule may set %s", r.loc, undecided, udevSetList(c))
					continue
				case c.bad != "":
					b.unsure("%s: ethtool command not read (%s)", r.loc, c.bad)
					continue
				}
				for _, kv := range c.set {
					b.set(kv[0], kv[1], facts.PersistUdev, r.loc)
				}
			}
		}
	}
}

func udevSetList(c ethtoolCmd) string {
	var s []string
	for _, kv := range c.set {
		s = append(s, kv[0]+" "+kv[1])
	}
	if len(s) == 0 {
		return "nothing kaudit audits"
	}
	return strings.Join(s, ", ")
}

// udevGlob matches a udev pattern: "|"-separated globs.
func udevGlob(pattern, s string) bool {
	for _, p := range strings.Split(pattern, "|") {
		if m, err := path.Match(p, s); m && err == nil {
			return true
		}
	}
	return false
}

func splitLoc(loc string) (file string, line int) {
	i := strings.LastIndexByte(loc, ':')
	if i < 0 {
		return loc, 0
	}
	n, _ := strconv.Atoi(loc[i+1:])
	return loc[:i], n
}

// ifcfg applies an ifcfg file's ETHTOOL_OPTS ("-K eth0 gro on; -G eth0 rx
// 4096"); the legacy form (options for ethtool -s) sets nothing audited.
func (b *bootBuilder) ifcfg(ps *facts.NICPersist, name string) {
	src := fmt.Sprintf("%s:%d", ps.File, ps.Line)
	if !strings.HasPrefix(strings.TrimSpace(ps.EthtoolOpts), "-") {
		return
	}
	for _, c := range ethtoolCommands(ps.EthtoolOpts, true) {
		if c.iface != name {
			continue
		}
		if c.bad != "" {
			b.unsure("%s: ETHTOOL_OPTS not read (%s)", src, c.bad)
			continue
		}
		for _, kv := range c.set {
			b.set(kv[0], kv[1], facts.PersistIfcfg, src)
		}
	}
}

// ifupdownOpts are the ethtool package's ifupdown options (its
// if-pre-up.d hook applies them).
var ifupdownOpts = map[string]string{
	"hardware-dma-ring-rx": "rx", "hardware-dma-ring-tx": "tx",
	"offload-tso": "tso", "offload-gso": "gso", "offload-gro": "gro", "offload-lro": "lro",
}

// ifupdown applies the "iface IF" stanzas' options: the hook's first
// (pre-up), then ethtool commands in pre-up, up and post-up, in order.
func (b *bootBuilder) ifupdown(opts []string, hook bool, name string) {
	var cmds []string
	for _, o := range opts {
		loc, text, _ := strings.Cut(o, " ")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if s, ok := ifupdownOpts[f[0]]; ok {
			v := ""
			if len(f) == 2 {
				v = f[1]
			}
			good := (s == "rx" || s == "tx") && reRingValue.MatchString(v) || (s != "rx" && s != "tx") && (v == "on" || v == "off")
			switch {
			case !hook:
				b.unsure("%s: %s without the ethtool package's ifupdown hook (/etc/network/if-pre-up.d/ethtool): it sets nothing", loc, f[0])
			case !good:
				b.unsure("%s: %q not read", loc, strings.TrimSpace(text))
			default:
				b.set(s, v, facts.PersistIfupdown, loc)
			}
			continue
		}
		cmds = append(cmds, o)
	}
	for _, o := range cmds {
		loc, text, _ := strings.Cut(o, " ")
		f := strings.Fields(text)
		for _, c := range ethtoolCommands(strings.Join(f[1:], " "), false) {
			if c.iface != name && c.iface != "$IFACE" && c.iface != "${IFACE}" {
				continue
			}
			if c.bad != "" {
				b.unsure("%s: ethtool command not read (%s)", loc, c.bad)
				continue
			}
			for _, kv := range c.set {
				b.set(kv[0], kv[1], facts.PersistIfupdown, loc)
			}
		}
	}
}

// networkManager applies the connection's ethtool.* properties: a ring
// size above 0, a feature on or off ("ignore", "", "--": not set).
func (b *bootBuilder) networkManager(nm map[string]string, conn string) {
	src := fmt.Sprintf("NetworkManager connection %q", conn)
	for _, s := range []string{"rx", "tx", "tso", "gso", "gro", "lro"} {
		v, ok := nm[s]
		switch {
		case !ok:
		case v == "!":
			b.unsure("%s: ethtool property for %s not read (nmcli failed)", src, s)
		case v == "" || v == "--" || v == "ignore" || v == "default" || v == "0":
		case (s == "rx" || s == "tx") && reRingValue.MatchString(v), (s != "rx" && s != "tx") && (v == "on" || v == "off"):
			b.set(s, v, facts.PersistNetworkManager, src)
		default:
			b.unsure("%s: ethtool property for %s is %q: not read", src, s, v)
		}
	}
}

func sortedMapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
