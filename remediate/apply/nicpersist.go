package apply

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/remediate"
)

// Persisting NIC settings in the host's own mechanism (the planner picks
// it, see remediate.Change.PersistPath):
//
//   - remediate.NICPersistPath: kaudit's udev rule file (RenderNICRules);
//   - remediate.LinkPath(IF): a systemd .link file kaudit owns
//     (RenderLink), matched by Change.PersistMatch;
//   - /etc/sysconfig/network-scripts/ifcfg-*: the ETHTOOL_OPTS assignment
//     is edited (EditIfcfg);
//   - /etc/network/interfaces and /etc/network/interfaces.d/*: post-up
//     lines under the interface's stanza (EditInterfaces);
//   - a NetworkManager connection (Change.NM):
//     nmcli connection modify, its previous values read, journalled and
//     restored as running values (keys "nm:UUID SETTING", nic.go).
//
// Edited files keep every other byte; all of them are backed up, written
// and restored like any other file of a run.

// nicPersistFile is the file a NIC change is persisted in ("" for a
// NetworkManager connection).
func nicPersistFile(c remediate.Change) string {
	if c.NM != "" {
		return ""
	}
	if c.PersistPath == "" {
		return remediate.NICPersistPath
	}
	return c.PersistPath
}

// nmReads are the NetworkManager connection values the read step reads
// for a NIC change persisted there (their previous values are journalled).
func nmReads(c remediate.Change) []NICRead {
	if c.NM == "" || !c.Persist {
		return nil
	}
	_, setting, _ := strings.Cut(c.Target, " ")
	return []NICRead{{Kind: c.Kind, Target: c.NM.Key(setting)}}
}

// nicFile is one file persisting NIC settings, as the apply step writes it.
type nicFile struct {
	path    string
	content []byte // unchanged content: nothing to write
	mode    string // of a created file
}

const (
	ifcfgDir      = "/etc/sysconfig/network-scripts/"
	interfacesDir = "/etc/network/interfaces.d/"
	interfaces    = "/etc/network/interfaces"
)

// renderNICPersist computes the new content of every file that persists
// set (grouped by NICSetting.Path), from what the read step found, and
// the NetworkManager connection values to set (running values of the NIC
// kinds, keyed remediate.NMConnection.Key, their Before read by the read
// step: nmReads).
func renderNICPersist(set []NICSetting, st *readState, runID string) ([]nicFile, []RuntimeWrite, error) {
	byPath := map[string][]NICSetting{}
	var nm []RuntimeWrite
	for _, s := range set {
		if s.NM != "" {
			w, change, err := nmWrite(s, st)
			if err != nil {
				return nil, nil, err
			}
			if change {
				nm = append(nm, w)
			}
			continue
		}
		p := s.Path
		if p == "" {
			p = remediate.NICPersistPath
		}
		byPath[p] = append(byPath[p], s)
	}
	var out []nicFile
	for _, p := range sortedKeys(byPath) {
		content, hold, err := renderNICFile(p, byPath[p], st, runID)
		if err != nil {
			return nil, nil, err
		}
		if !hold {
			out = append(out, nicFile{path: p, content: content, mode: ManagedFileMode})
		}
	}
	return out, nm, nil
}

// nmWrite is the NetworkManager connection value that persists s (in its
// connection s.NM), and whether it differs from what was read.
func nmWrite(s NICSetting, st *readState) (RuntimeWrite, bool, error) {
	uuid := string(s.NM)
	if err := checkSettings([]NICSetting{s}); err != nil {
		return RuntimeWrite{}, false, err
	}
	if !safe.NMUUID(uuid) {
		return RuntimeWrite{}, false, fmt.Errorf("%s %s: NetworkManager connection UUID %q", s.Iface, s.Setting, uuid)
	}
	key := s.NM.Key(s.Setting)
	before, ok := st.nic[key]
	if !ok {
		return RuntimeWrite{}, false, fmt.Errorf("%s: not read", key)
	}
	if err := checkNICValue(s.Kind, key, before); err != nil {
		return RuntimeWrite{}, false, fmt.Errorf("NetworkManager connection %s: current value: %w", uuid, err)
	}
	return RuntimeWrite{Kind: s.Kind, Key: key, Before: before, To: s.Value}, before != s.Value, nil
}

// renderNICFile computes the new content of persistence file p for the
// settings ss, by the file's kind (its path). hold: kaudit's udev rule
// file already holds them, nothing to write.
func renderNICFile(p string, ss []NICSetting, st *readState, runID string) (content []byte, hold bool, err error) {
	fs := st.files[p]
	if err := checkPath(p); err != nil {
		return nil, false, err
	}
	mustExist := func() error {
		if !fs.exists {
			return fmt.Errorf("%s does not exist on the host: kaudit edits it, it does not create it", p)
		}
		return nil
	}
	switch {
	case p == remediate.NICPersistPath:
		if fs.exists && nicRulesHold(fs.content, ss) {
			return nil, true, nil
		}
		content, err = RenderNICRules(fs.content, ss, st.ethtool, runID)
	case strings.HasPrefix(p, "/etc/systemd/network/10-kaudit-"):
		iface, err := oneIface(p, ss)
		if err != nil {
			return nil, false, err
		}
		if p != remediate.LinkPath(iface) {
			return nil, false, fmt.Errorf("%s: not the .link file of %s", p, iface)
		}
		content, err = RenderLink(fs.content, ss, string(ss[0].Match), runID)
		return content, false, err
	case strings.HasPrefix(p, ifcfgDir+"ifcfg-"):
		if err := mustExist(); err != nil {
			return nil, false, err
		}
		iface, err := oneIface(p, ss)
		if err != nil {
			return nil, false, err
		}
		content, err = EditIfcfg(fs.content, iface, ss, runID)
		return content, false, err
	case p == interfaces || (strings.HasPrefix(p, interfacesDir) && path.Dir(p)+"/" == interfacesDir):
		if err := mustExist(); err != nil {
			return nil, false, err
		}
		content, err = EditInterfaces(fs.content, ss, st.ethtool, runID)
	default:
		return nil, false, fmt.Errorf("%s: kaudit does not persist NIC settings there", p)
	}
	return content, false, err
}

// oneIface returns the interface of settings that must all be for one.
func oneIface(p string, ss []NICSetting) (string, error) {
	for _, s := range ss[1:] {
		if s.Iface != ss[0].Iface {
			return "", fmt.Errorf("%s: settings of %s and %s in one file", p, ss[0].Iface, s.Iface)
		}
	}
	return ss[0].Iface, nil
}

func checkSettings(ss []NICSetting) error {
	for _, s := range ss {
		if remediate.IsNMKey(s.Iface) {
			return fmt.Errorf("%q is not an interface", s.Iface)
		}
		if _, _, err := nicTarget(s.Kind, s.Iface+" "+s.Setting); err != nil {
			return err
		}
		if err := checkNICValue(s.Kind, s.Iface+" "+s.Setting, s.Value); err != nil {
			return err
		}
	}
	return nil
}

// --- systemd .link ---

var (
	reLinkMatch = regexp.MustCompile(`^MACAddress=([0-9a-f]{2}(:[0-9a-f]{2}){5}) Driver=([A-Za-z0-9_.-]{1,64})$`)
	reLinkLine  = regexp.MustCompile(`^([A-Za-z]+)=(.*)$`)
)

const linkHeader = "# Managed by kaudit — do not edit by hand; changes are overwritten by 'kaudit fix'.\n" +
	"# It sorts before 99-default.link and replaces it for this interface\n" +
	"# (only the first matching .link file applies), so it repeats its policies.\n"

// parseLink reads a .link file kaudit wrote: its [Link] keys and its
// [Match] keys.
func parseLink(existing []byte) (byKey, match map[string]string, err error) {
	byKey, match = map[string]string{}, map[string]string{}
	section := ""
	for _, line := range strings.Split(string(existing), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		default:
			kv := reLinkLine.FindStringSubmatch(line)
			if kv == nil {
				return nil, nil, fmt.Errorf("existing .link file: line %q is not one kaudit wrote", line)
			}
			if section == "[Match]" {
				match[kv[1]] = kv[2]
			} else {
				byKey[kv[1]] = kv[2]
			}
		}
	}
	return byKey, match, nil
}

// RenderLink returns the content of kaudit's .link file for one
// interface: match ("MACAddress=… Driver=…", remediate.Change.PersistMatch)
// and the settings of existing (kaudit's earlier run) and set, set
// winning. When existing already holds every setting with that match, it
// is returned as is.
func RenderLink(existing []byte, set []NICSetting, match, runID string) ([]byte, error) {
	m := reLinkMatch.FindStringSubmatch(match)
	if m == nil {
		return nil, fmt.Errorf(".link match %q: want \"MACAddress=xx:xx:xx:xx:xx:xx Driver=NAME\"", match)
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q", runID)
	}
	if err := checkSettings(set); err != nil {
		return nil, err
	}
	byKey, oldMatch, err := parseLink(existing)
	if err != nil {
		return nil, err
	}
	same := len(existing) > 0 && oldMatch["MACAddress"] == m[1] && oldMatch["Driver"] == m[3]
	for _, s := range set {
		v := s.Value
		if s.Kind == remediate.KindNICOffload {
			v = map[string]string{"on": "true", "off": "false"}[v]
		}
		k, _ := facts.LinkKey(s.Setting)
		if byKey[k] != v {
			same = false
		}
		byKey[k] = v
	}
	if same {
		return existing, nil
	}
	var keys []string
	for _, s := range facts.NICSettings() {
		k, _ := facts.LinkKey(s)
		if v, ok := byKey[k]; ok {
			keys = append(keys, k+"="+v)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(linkHeader + "# Last run: " + runID + "\n\n[Match]\n")
	fmt.Fprintf(&b, "MACAddress=%s\nDriver=%s\n\n[Link]\n", m[1], m[3])
	b.WriteString("NamePolicy=keep kernel database onboard slot path\nAlternativeNamesPolicy=database onboard slot path\nMACAddressPolicy=persistent\n")
	for _, k := range keys {
		b.WriteString(k + "\n")
	}
	return []byte(b.String()), nil
}

// --- RHEL ifcfg ---

var reEthtoolOpts = regexp.MustCompile(`^([ \t]*)ETHTOOL_OPTS=(.*?)(\r?)$`)

// ethtoolCommands splits an ifcfg ETHTOOL_OPTS value (one level of
// quotes removed) into its ethtool commands ("-K eth0 gro off; -G eth0 rx
// 4096"). Only plain values in the modern form (each command starting with
// an option) are accepted.
func ethtoolCommands(value string) ([][]string, error) {
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
func setEthtoolOpt(cmds [][]string, iface string, s NICSetting) (out [][]string, changed bool) {
	opts := map[string]bool{"-K": true, "--features": true, "--offload": true}
	flag := "-K"
	if s.Kind == remediate.KindNICRing {
		opts, flag = map[string]bool{"-G": true, "--set-ring": true}, "-G"
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
		cmds = append(cmds, []string{flag, iface, s.Setting, s.Value})
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
func EditIfcfg(content []byte, iface string, set []NICSetting, runID string) ([]byte, error) {
	if err := checkSettings(set); err != nil {
		return nil, err
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q", runID)
	}
	lines := strings.SplitAfter(string(content), "\n")
	at := -1
	var indent, cr, value string
	for i, l := range lines {
		if m := reEthtoolOpts.FindStringSubmatch(strings.TrimSuffix(l, "\n")); m != nil {
			at, indent, value, cr = i, m[1], m[2], m[3]
		}
	}
	cmds, err := ethtoolCommands(value)
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

// --- Debian ifupdown ---

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
	if indent == "" {
		indent = "    "
	}
	return start, last, indent, nil
}

// postUpLine is kaudit's ifupdown line that sets s on iface at ifup.
func postUpLine(indent, ethtool, iface string, s NICSetting) string {
	flag := "K"
	if s.Kind == remediate.KindNICRing {
		flag = "G"
	}
	return fmt.Sprintf("%spost-up %s -%s %s %s %s || true", indent, ethtool, flag, iface, s.Setting, s.Value)
}

// EditInterfaces adds, under the first "iface IF" stanza, one line per
// setting: "post-up ETHTOOL -G IF rx 4096 || true" ("|| true": ethtool
// fails when nothing changes, which must not fail ifup), or updates the
// value of such a line already there (an earlier run). Every other line
// is kept byte for byte.
func EditInterfaces(content []byte, set []NICSetting, ethtool, runID string) ([]byte, error) {
	if !reEthtool.MatchString(ethtool) || strings.Contains(ethtool, "..") {
		return nil, fmt.Errorf("ethtool path %q: want an absolute path of [A-Za-z0-9_./-]", ethtool)
	}
	if !remediate.ValidRunID(runID) {
		return nil, fmt.Errorf("run id %q", runID)
	}
	if err := checkSettings(set); err != nil {
		return nil, err
	}
	if len(set) == 0 {
		return content, nil
	}
	iface := set[0].Iface
	if _, err := oneIface("interfaces", set); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(content), "\n")
	start, last, indent, err := ifaceStanza(lines, iface)
	if err != nil {
		return nil, err
	}
	reOurs := regexp.MustCompile(`^([ \t]*)post-up[ \t]+/[A-Za-z0-9_./-]+[ \t]+-([GK])[ \t]+` + regexp.QuoteMeta(iface) + `[ \t]+([a-z]+)[ \t]+([a-z0-9]+)([ \t]+\|\|[ \t]+true)?[ \t]*(\r?)$`)
	line := func(ind string, s NICSetting) string { return postUpLine(ind, ethtool, iface, s) }
	changed := false
	var add []string
	for _, s := range set {
		found := false
		for i := start + 1; i <= last; i++ {
			body := strings.TrimSuffix(lines[i], "\n")
			m := reOurs.FindStringSubmatch(body)
			if m == nil || m[3] != s.Setting || (m[2] == "G") != (s.Kind == remediate.KindNICRing) {
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
