package nicpersist

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
)

// link is systemd-udevd's .link files (systemd.link(5)): the first file
// (by name) whose [Match] selects the interface applies its [Link] keys
// when the interface appears. kaudit writes a file of its own (LinkPath)
// matched by MAC address and driver.
type link struct{}

// MinLinkRingsVersion is the first systemd whose .link files take
// RxBufferSize=/TxBufferSize= (244; the offload keys came in 232): on an
// older one kaudit keeps to the udev rule.
const MinLinkRingsVersion = 244

// LinkPath is the systemd .link file kaudit writes for an interface: it
// sorts before 99-default.link (only the first matching .link applies).
func LinkPath(iface string) string { return "/etc/systemd/network/10-kaudit-" + iface + ".link" }

func (link) Name() facts.PersistMechanism { return facts.PersistSystemdLink }

func (link) Owns(p string) bool { return strings.HasPrefix(p, "/etc/systemd/network/10-kaudit-") }

// linkKeys are the systemd.link(5) [Link] keys of the settings.
var linkKeys = map[string]string{"rx": "RxBufferSize", "tx": "TxBufferSize", "tso": "TCPSegmentationOffload",
	"gso": "GenericSegmentationOffload", "gro": "GenericReceiveOffload", "lro": "LargeReceiveOffload"}

// linkSetting is the setting a [Link] key sets ("RxBufferSize" → "rx").
func linkSetting(key string) (string, bool) {
	for s, k := range linkKeys {
		if k == key {
			return s, true
		}
	}
	return "", false
}

// linkBool is a .link boolean of on/off.
func linkBool(v string) string {
	return map[string]string{"on": "true", "off": "false"}[v]
}

// detect: udevd applies .link files with ring sizes (99-default.link,
// /etc/systemd/network, udevadm ≥ MinLinkRingsVersion). File names an
// existing .link in /etc or /run (kaudit's own excepted) that already
// matches the interface (by OriginalName, Name, MAC or driver).
func (link) detect(p *facts.NICPersist, in *input) bool {
	version, _ := strconv.Atoi(in.last("@udev-version"))
	if in.last("@link-default") == "" || !slices.ContainsFunc(in.lines, func(l string) bool { return strings.HasPrefix(l, "@link-dir") }) || version < MinLinkRingsVersion {
		return false
	}
	p.Mechanism = facts.PersistSystemdLink
	cur := ""
	for _, line := range in.lines {
		key, val, _ := strings.Cut(line, " ")
		if key == "@link" {
			cur = strings.TrimSpace(val)
		} else if key == "@link-key" && cur != "" && p.File == "" && !(link{}).Owns(cur) {
			k, v, ok := strings.Cut(val, "=")
			if ok && linkKeyMatches(strings.TrimSpace(k), strings.TrimSpace(v), in.name, in.driver, p.MAC) {
				p.File = cur
			}
		}
	}
	return true
}

// linkKeyMatches reports whether one key of a .link file selects the
// interface: OriginalName and Name (globs, space-separated lists), MAC
// addresses, or its driver.
func linkKeyMatches(key, val, name, driver, mac string) bool {
	for _, w := range strings.Fields(val) {
		w = strings.TrimPrefix(w, "!")
		switch key {
		case "OriginalName", "Name":
			if ok, err := path.Match(w, name); ok && err == nil {
				return true
			}
		case "MACAddress", "PermanentMACAddress":
			if mac != "" && strings.EqualFold(w, mac) {
				return true
			}
		case "Driver":
			if driver != "" {
				if ok, err := path.Match(w, driver); ok && err == nil {
					return true
				}
			}
		}
	}
	return false
}

// --- boot: the first matching .link file ---

type numbered struct {
	n    int
	text string
}

type linkFile struct {
	path  string
	lines []numbered
}

// linkSince is the first systemd version whose .link files take a
// setting (its [Link] key: linkKeys).
func linkSince(setting string) int {
	if isRing(setting) {
		return MinLinkRingsVersion
	}
	return 232
}

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

// readLinks reads the .link files of the persistence lines (by file name
// across /etc/systemd/network, /run, /usr/lib, /lib; a name in an earlier
// directory, or linked to /dev/null, masks a later one).
func readLinks(in *input) (links []linkFile, nulled map[string]bool) {
	nulled = map[string]bool{}
	for _, line := range in.lines {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "@link":
			links = append(links, linkFile{path: strings.TrimSpace(val)})
		case "@link-line":
			n, text, _ := strings.Cut(val, " ")
			if ln, err := strconv.Atoi(n); err == nil && len(links) > 0 {
				links[len(links)-1].lines = append(links[len(links)-1].lines, numbered{ln, text})
			}
		case "@link-null":
			nulled[path.Base(strings.TrimSpace(val))] = true
		}
	}
	slices.SortStableFunc(links, func(a, b linkFile) int {
		return cmp.Or(strings.Compare(path.Base(a.path), path.Base(b.path)), cmp.Compare(linkDirRank(a.path), linkDirRank(b.path)))
	})
	return links, nulled
}

// boot applies the first .link file that matches the interface: its
// RxBufferSize=, TxBufferSize= (systemd ≥ 244), GenericReceiveOffload=,
// TCPSegmentationOffload=, GenericSegmentationOffload=,
// LargeReceiveOffload= (≥ 232); only when udevadm reports a version.
func (link) boot(b *builder, in *input) {
	links, nulled := readLinks(in)
	version, _ := strconv.Atoi(in.last("@udev-version"))
	if version <= 0 {
		if len(links) > 0 {
			b.unsure(".link files exist but udevadm was not found: not counted")
		}
		return
	}
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
		ok, undecided := linkMatches(match, in.name, in.driver, in.mac)
		if undecided != "" {
			b.unsure("%s: [Match] %s= not evaluated by kaudit: if it matches %s, its settings apply instead of any later .link", lf.path, undecided, in.name)
			continue
		}
		if ok {
			b.linkKeys(lf.path, keys, version)
			return // only the first matching .link applies
		}
	}
}

// linkKeys records the [Link] keys of the .link file that applies.
func (b *builder) linkKeys(file string, keys map[string]numbered, version int) {
	for _, k := range sortedKeys(keys) {
		setting, _ := linkSetting(k)
		kv := keys[k]
		src := fmt.Sprintf("%s:%d", file, kv.n)
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
				if _, ours := linkSetting(k); ours {
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
	for _, k := range sortedKeys(match) {
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
	return slices.ContainsFunc(words, func(w string) bool {
		m, err := path.Match(strings.TrimPrefix(w, "!"), s)
		return m && err == nil
	})
}

// linkValue reads a .link value: a ring size ("max" kept as is) or a
// boolean (systemd's parse_boolean) as on/off.
func linkValue(setting, v string) (string, bool) {
	if isRing(setting) {
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

// --- plan ---

// Plan persists in a systemd .link file of kaudit's own, unless one of
// the host's already matches the interface (it would win: the udev rule
// and a manual action instead), or the interface has no stable match
// (MAC address and driver).
func (link) Plan(nic facts.NIC, set map[string]string) Plan {
	ps := nic.Persist
	if ps.File != "" {
		var keys []string
		for _, s := range sortedKeys(set) {
			v := set[s]
			if v == "on" || v == "off" {
				v = linkBool(v)
			}
			k := linkKeys[s]
			keys = append(keys, k+"="+v)
		}
		return Plan{Path: UdevPath, Manual: fmt.Sprintf("%s already matches %s and applies before any .link kaudit could add: kaudit persisted the settings in %s; to keep them in systemd instead add %s to its [Link] section, then remove %s's lines from %s",
			ps.File, nic.Name, UdevPath, strings.Join(keys, " "), nic.Name, UdevPath)}
	}
	if ps.MAC == "" || nic.Driver == "" || !safe.IfaceChars(nic.Name) || strings.ContainsAny(nic.Driver, " \t\n=\"'\\") {
		return udevPlan // a .link needs a stable match: MAC address and driver
	}
	return Plan{
		Path:  LinkPath(nic.Name),
		Match: "MACAddress=" + ps.MAC + " Driver=" + nic.Driver,
		Note:  fmt.Sprintf("persisted in %s (matched by MAC address and driver): systemd applies it when the interface next appears (reboot, or udevadm trigger); if the NIC's driver is in the initramfs, rebuild it", LinkPath(nic.Name)),
	}
}

// --- render ---

var reLinkMatch = regexp.MustCompile(`^MACAddress=([0-9a-f]{2}(:[0-9a-f]{2}){5}) Driver=([A-Za-z0-9_.-]{1,64})$`)

// LinkHeader opens the .link files kaudit writes.
const LinkHeader = "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'.\n" +
	"# It sorts before 99-default.link and replaces it for this interface\n" +
	"# (only the first matching .link file applies), so it repeats its policies.\n"

func (link) Render(f File, ss []Setting, env Env) ([]byte, bool, error) {
	iface, err := oneIface(f.Path, ss)
	if err != nil {
		return nil, false, err
	}
	if f.Path != LinkPath(iface) {
		return nil, false, fmt.Errorf("%s: not the .link file of %s", f.Path, iface)
	}
	content, err := RenderLink(f.Content, ss, env.Match, env.RunID)
	return content, false, err
}

// RenderLink returns the content of kaudit's .link file for one
// interface: match ("MACAddress=… Driver=…", Plan.Match) and the settings
// of existing (kaudit's earlier run) and set, set winning. When existing
// already holds every setting with that match, it is returned as is.
func RenderLink(existing []byte, set []Setting, match, runID string) ([]byte, error) {
	m := reLinkMatch.FindStringSubmatch(match)
	if m == nil {
		return nil, fmt.Errorf(".link match %q: want \"MACAddress=xx:xx:xx:xx:xx:xx Driver=NAME\"", match)
	}
	if err := Check(set); err != nil {
		return nil, err
	}
	var lines []numbered
	for i, l := range strings.Split(string(existing), "\n") {
		lines = append(lines, numbered{i + 1, l})
	}
	oldMatch, old, why := parseLinkFile(lines)
	if why != "" {
		return nil, fmt.Errorf("existing .link file: %s", why)
	}
	same := len(existing) > 0 && strings.Join(oldMatch["MACAddress"], " ") == m[1] && strings.Join(oldMatch["Driver"], " ") == m[3]
	byKey := map[string]string{}
	for k, v := range old {
		byKey[k] = v.text
	}
	for _, s := range set {
		v := s.Value
		if !s.Ring() {
			v = linkBool(v)
		}
		k := linkKeys[s.Setting]
		same = same && byKey[k] == v
		byKey[k] = v
	}
	if same {
		return existing, nil
	}
	var b strings.Builder
	b.WriteString(LinkHeader + "# Last run: " + runID + "\n\n[Match]\n")
	fmt.Fprintf(&b, "MACAddress=%s\nDriver=%s\n\n[Link]\n", m[1], m[3])
	b.WriteString("NamePolicy=keep kernel database onboard slot path\nAlternativeNamesPolicy=database onboard slot path\nMACAddressPolicy=persistent\n")
	for _, k := range sortedKeys(byKey) {
		b.WriteString(k + "=" + byKey[k] + "\n")
	}
	return []byte(b.String()), nil
}
