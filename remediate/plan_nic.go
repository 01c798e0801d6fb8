package remediate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/rules"
)

// NICPersistPath is where ring and offload settings are persisted when
// the host's own mechanism cannot be used (facts.NIC.Persist): a udev
// rule that runs ethtool when the interface appears. See nicPersistence
// for the others (NetworkManager, ifcfg ETHTOOL_OPTS, ifupdown post-up,
// systemd .link).
const NICPersistPath = "/etc/udev/rules.d/99-kaudit-ethtool.rules"

// LinkPath is the systemd .link file kaudit writes for an interface: it
// sorts before 99-default.link (only the first matching .link applies).
func LinkPath(iface string) string { return "/etc/systemd/network/10-kaudit-" + iface + ".link" }

func (p *planner) addNIC(rule, ifc, setting, value string) {
	nic := p.findNIC(ifc)
	if nic == nil {
		p.warn("%s: interface %s is not in the gathered facts: %s %s not planned", rule, ifc, ifc, setting)
		return
	}
	switch setting {
	case "rx", "tx":
		p.addRing(rule, nic, setting, value)
	default:
		p.addOffload(rule, nic, setting, value)
	}
}

// addRing asks for a ring size, capped at the NIC's pre-set maximum.
func (p *planner) addRing(rule string, nic *facts.NIC, setting, value string) {
	ifc, target := nic.Name, nic.Name+" "+setting
	want, err := strconv.Atoi(value)
	if err != nil || want <= 0 {
		p.warn("%s: ring size %q for %s is not a positive number", rule, value, target)
		return
	}
	if nic.Ring == nil {
		reason := nic.RingErr
		if strings.Contains(strings.ToLower(reason), "not supported") {
			// The driver has no ring settings (veth, virtual NICs): ethtool -G would fail.
			p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("the %s driver of %s has no ring settings (ethtool -g: %s)", driverName(nic), ifc, reason),
				"nothing to change on this host; waive the finding here")
			return
		}
		if reason == "" {
			reason = "not read"
		}
		p.warn("%s: %s ring sizes are unavailable (%s): %s not planned", rule, ifc, reason, target)
		return
	}
	cur, top := ring(nic.Ring, setting)
	if top <= 0 {
		shown := "n/a"
		if top == 0 {
			shown = "0"
		}
		p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("%s reports no %s ring maximum (Pre-set maximums %s: %s): kaudit never sets a ring above the pre-set maximum", ifc, setting, strings.ToUpper(setting), shown),
			fmt.Sprintf("nothing kaudit can check on this host: if the %s driver documents a larger %s ring, set it with ethtool -G %s %s N yourself", driverName(nic), setting, ifc, setting))
		return
	}
	to := min(want, top)
	if cur >= to {
		return
	}
	p.mergeNIC(rule, target, strconv.Itoa(to), func(a, b string) string {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return strconv.Itoa(max(x, y))
	})
}

// addOffload asks for an offload on or off, unless the driver fixes it.
func (p *planner) addOffload(rule string, nic *facts.NIC, setting, value string) {
	ifc, target := nic.Name, nic.Name+" "+setting
	want := strings.ToLower(value)
	if want != "on" && want != "off" {
		p.warn("%s: offload %s wants %q, not on or off", rule, target, value)
		return
	}
	feat, ok := nic.Features[setting]
	if !ok {
		p.warn("%s: %s does not report feature %s: not planned", rule, ifc, setting)
		return
	}
	if feat.On == (want == "on") {
		return
	}
	if want == "on" {
		if reason, instead := rules.OffloadBlocked(nic, setting); reason != "" {
			p.cannotNIC(rule, KindNICOffload, target, want, reason, instead)
			return
		}
	}
	if feat.Fixed {
		p.cannotNIC(rule, KindNICOffload, target, want, fmt.Sprintf("%s cannot be turned %s: it is %s [fixed] by the %s driver", setting, want, onOff(feat.On), driverName(nic)),
			fmt.Sprintf("nothing to change on this host: the %s driver does not let it change; waive the finding here", driverName(nic)))
		return
	}
	p.mergeNIC(rule, target, want, func(a, b string) string {
		if a == "on" || b == "on" {
			return "on"
		}
		return "off"
	})
}

func (p *planner) mergeNIC(rule, target, to string, pick func(a, b string) string) {
	r, ok := p.nic[target]
	if !ok {
		p.nic[target] = &request{to: to, rules: []string{rule}}
		return
	}
	r.rules = appendRule(r.rules, rule)
	if r.persistOnly {
		r.persistOnly, r.to = false, to
		return
	}
	r.to = pick(r.to, to)
}

// addNICPersist asks for a NIC setting to be persisted only: the running
// value already is value (nic-persisted), nothing sets it at boot or
// something sets another. A runtime request for the same target covers it.
func (p *planner) addNICPersist(rule, ifc, setting, value string) {
	nic := p.findNIC(ifc)
	if nic == nil {
		p.warn("%s: interface %s is not in the gathered facts: %s %s not persisted", rule, ifc, ifc, setting)
		return
	}
	target := ifc + " " + setting
	switch setting {
	case "rx", "tx":
		if nic.Ring == nil {
			p.warn("%s: %s ring sizes are unavailable: %s not persisted", rule, ifc, target)
			return
		}
		if cur, _ := ring(nic.Ring, setting); strconv.Itoa(cur) != value {
			p.warn("%s: %s runs %d, not %s: not persisted", rule, target, cur, value)
			return
		}
	default:
		ft, ok := nic.Features[setting]
		if !ok || onOff(ft.On) != value {
			p.warn("%s: %s is not %s now: not persisted", rule, target, value)
			return
		}
	}
	if r, ok := p.nic[target]; ok {
		r.rules = appendRule(r.rules, rule)
		return
	}
	p.nic[target] = &request{to: value, rules: []string{rule}, persistOnly: true}
}

// nicChanges are the ring and offload requests, each with where its
// interface's settings are persisted.
func (p *planner) nicChanges() []Change {
	perIface := map[string]map[string]string{} // iface → setting → value
	for _, target := range sortedKeys(p.nic) {
		ifc, setting, _ := strings.Cut(target, " ")
		if perIface[ifc] == nil {
			perIface[ifc] = map[string]string{}
		}
		perIface[ifc][setting] = p.nic[target].to
	}
	persistBy := map[string]nicPersistence{}
	for _, ifc := range sortedKeys(perIface) {
		if nic := p.findNIC(ifc); nic != nil {
			persistBy[ifc] = p.nicPersistence(*nic, perIface[ifc])
		}
	}
	var changes []Change
	for _, target := range sortedKeys(p.nic) {
		ifc, _, _ := strings.Cut(target, " ")
		var nic facts.NIC
		if n := p.findNIC(ifc); n != nil {
			nic = *n
		}
		if c := p.keep(p.nicChange(target, nic, persistBy[ifc])); c.Kind != "" {
			changes = append(changes, c)
		}
	}
	return changes
}

func (p *planner) nicChange(target string, nic facts.NIC, np nicPersistence) Change {
	r := p.nic[target]
	_, setting, _ := strings.Cut(target, " ")
	c := Change{
		Host: p.host, Rules: r.rules, Target: target, To: r.to,
		Runtime: !r.persistOnly, Persist: true, PersistPath: np.path, PersistMatch: np.match, NM: np.nm,
	}
	switch setting {
	case "rx", "tx":
		c.Kind = KindNICRing
		cur, top := ring(nic.Ring, setting)
		if cur >= 0 {
			c.From = strconv.Itoa(cur)
		}
		c.Note = "changing ring sizes resets the NIC on many drivers (a brief link drop)"
		if r.to == strconv.Itoa(top) {
			c.Note += fmt.Sprintf("\n%d is the NIC's pre-set maximum", top)
		}
	default:
		c.Kind = KindNICOffload
		c.From = onOff(nic.Features[setting].On)
	}
	if r.persistOnly {
		// Nothing changes on the running NIC: no link reset either.
		c.Note = fmt.Sprintf("already %s now, but not what the host sets at boot: persisted only (the running NIC is not touched)", r.to)
	}
	if np.note != "" {
		c.Note = strings.TrimPrefix(c.Note+"\n"+np.note, "\n")
	}
	return c
}

// ring is the current size and pre-set maximum of the rx or tx ring.
func ring(r *facts.Ring, setting string) (cur, top int) {
	if setting == "tx" {
		return r.TX, r.TXMax
	}
	return r.RX, r.RXMax
}

// findNIC is the last gathered interface named ifc, nil when none is.
func (p *planner) findNIC(ifc string) *facts.NIC {
	var nic *facts.NIC
	for i := range p.f.NICs {
		if p.f.NICs[i].Name == ifc {
			nic = &p.f.NICs[i]
		}
	}
	return nic
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func driverName(n *facts.NIC) string {
	if n.Driver != "" {
		return n.Driver
	}
	return "NIC"
}

// nicPersistence is where one interface's settings are persisted.
type nicPersistence struct {
	path  string       // Change.PersistPath
	match PersistMatch // Change.PersistMatch
	nm    NMConnection // Change.NM
	note  string       // added to each change's note
}

var rePersistFile = regexp.MustCompile(`^/[A-Za-z0-9_./+@,=-]*$`)

// nicPersistence picks how the settings of one interface are persisted,
// from facts.NIC.Persist: a NetworkManager connection (nmPersistence), an
// ifcfg file's ETHTOOL_OPTS, post-up lines in an ifupdown stanza, a
// systemd .link file of kaudit's own (LinkPath, matched by MAC address
// and driver), else the udev rule NICPersistPath.
// Where the host's mechanism cannot be used safely (NetworkManager too old
// for a setting or its connection UUID unknown; a .link file of the
// host's that already matches the interface and would win; a legacy
// ETHTOOL_OPTS), it falls back to the udev rule and adds a manual action
// saying how to persist in the host's own mechanism instead.
func (p *planner) nicPersistence(nic facts.NIC, set map[string]string) nicPersistence {
	udev := nicPersistence{path: NICPersistPath}
	ps := nic.Persist
	if ps == nil {
		return udev
	}
	switch ps.Mechanism {
	case facts.PersistNetworkManager:
		if np, ok := nmPersistence(nic, set); ok {
			return np
		}
		return p.nmFallback(nic, set)
	case facts.PersistIfcfg:
		if !p.editable(nic, ps.File) {
			return udev
		}
		if o := strings.TrimSpace(ps.EthtoolOpts); o != "" && !strings.HasPrefix(o, "-") {
			p.addManualFor(p.nicRules(nic.Name), fmt.Sprintf("%s line %d sets ETHTOOL_OPTS in the legacy form (%q, options for ethtool -s): kaudit persisted %s's settings in %s; to keep them in %s, rewrite it as \"-s %s %s; -G %s ...; -K %s ...\"",
				ps.File, ps.Line, o, nic.Name, NICPersistPath, ps.File, nic.Name, o, nic.Name, nic.Name))
			return udev
		}
		return nicPersistence{path: ps.File, note: fmt.Sprintf("persisted in ETHTOOL_OPTS of %s (other lines kept byte for byte): applied at the interface's next ifup", ps.File)}
	case facts.PersistIfupdown:
		if !p.editable(nic, ps.File) {
			return udev
		}
		return nicPersistence{path: ps.File, note: fmt.Sprintf("persisted as post-up lines in the \"iface %s\" stanza of %s (line %d; other lines kept byte for byte): applied at the interface's next ifup", nic.Name, ps.File, ps.Line)}
	case facts.PersistSystemdLink:
		return p.linkPersistence(nic, set)
	}
	return udev
}

// editable reports whether kaudit may edit file for nic, with a warning
// when it may not.
func (p *planner) editable(nic facts.NIC, file string) bool {
	if rePersistFile.MatchString(file) {
		return true
	}
	p.warn("%s: %s cannot be edited by kaudit (unusual characters in its path): persisting in %s", nic.Name, file, NICPersistPath)
	return false
}

// nmFallback persists a NetworkManager interface with the udev rule and
// says how to keep the settings in NetworkManager instead.
func (p *planner) nmFallback(nic facts.NIC, set map[string]string) nicPersistence {
	ps := nic.Persist
	var args []string
	rings := false
	for _, s := range sortedKeys(set) {
		switch s {
		case "rx", "tx":
			rings = true
			args = append(args, "ethtool.ring-"+s+" "+set[s])
		default:
			args = append(args, "ethtool.feature-"+s+" "+set[s])
		}
	}
	action := fmt.Sprintf("%s is managed by NetworkManager (connection %q): kaudit persisted its settings in %s; to keep them in NetworkManager instead run `nmcli connection modify %s %s`, then remove %s's lines from %s",
		nic.Name, ps.Connection, NICPersistPath, remote.QuoteWord(ps.Connection), strings.Join(args, " "), nic.Name, NICPersistPath)
	if rings && !versionAtLeast(ps.NMVersion, 1, 26) {
		action = fmt.Sprintf("%s is managed by NetworkManager %s (connection %q): kaudit persisted its settings in %s (NetworkManager takes ring sizes only from 1.26 on)",
			nic.Name, orUnknown(ps.NMVersion), ps.Connection, NICPersistPath)
	}
	p.addManualFor(p.nicRules(nic.Name), action)
	return nicPersistence{path: NICPersistPath,
		note: fmt.Sprintf("%s is managed by NetworkManager (connection %q): persisted with the udev rule; ethtool settings in that connection, if any, win when it is activated", nic.Name, ps.Connection)}
}

// linkPersistence persists in a systemd .link file of kaudit's own,
// unless one of the host's already matches the interface (it would win).
func (p *planner) linkPersistence(nic facts.NIC, set map[string]string) nicPersistence {
	ps := nic.Persist
	udev := nicPersistence{path: NICPersistPath}
	if ps.File != "" {
		var keys []string
		for _, s := range sortedKeys(set) {
			v := set[s]
			if v == "on" || v == "off" {
				v = map[string]string{"on": "true", "off": "false"}[v]
			}
			k, _ := facts.LinkKey(s)
			keys = append(keys, k+"="+v)
		}
		p.addManualFor(p.nicRules(nic.Name), fmt.Sprintf("%s already matches %s and applies before any .link kaudit could add: kaudit persisted the settings in %s; to keep them in systemd instead add %s to its [Link] section, then remove %s's lines from %s",
			ps.File, nic.Name, NICPersistPath, strings.Join(keys, " "), nic.Name, NICPersistPath))
		return udev
	}
	if ps.MAC == "" || nic.Driver == "" || !safe.IfaceChars(nic.Name) || strings.ContainsAny(nic.Driver, " \t\n=\"'\\") {
		return udev // a .link needs a stable match: MAC address and driver
	}
	return nicPersistence{
		path:  LinkPath(nic.Name),
		match: PersistMatch("MACAddress=" + ps.MAC + " Driver=" + nic.Driver),
		note:  fmt.Sprintf("persisted in %s (matched by MAC address and driver): systemd applies it when the interface next appears (reboot, or udevadm trigger); if the NIC's driver is in the initramfs, rebuild it", LinkPath(nic.Name)),
	}
}

// PersistMatch is Change.PersistMatch: the [Match] keys of a systemd
// .link file.
type PersistMatch string

// NMConnection is the NetworkManager connection (its UUID) a NIC setting
// is persisted in (Change.NM). Its settings are running values of the NIC
// kinds, keyed "nm:<UUID> <setting>" (Key) in the journal and the host's
// manifest; a journal written before Change.NM names it in PersistMatch
// as legacyNMMatch + UUID (Change.UnmarshalJSON).
type NMConnection string

const (
	nmKeyPrefix   = "nm:"
	legacyNMMatch = "nm-uuid="
)

// Key is the running-value key of setting ("rx", "gro") in connection n.
func (n NMConnection) Key(setting string) string { return nmKeyPrefix + string(n) + " " + setting }

// NMConnectionOf is the connection of the interface part of a Key
// ("nm:<UUID>"); ok is false for an interface name or a malformed UUID.
func NMConnectionOf(iface string) (NMConnection, bool) {
	uuid, ok := strings.CutPrefix(iface, nmKeyPrefix)
	if !ok || !safe.NMUUID(uuid) {
		return "", false
	}
	return NMConnection(uuid), true
}

// IsNMKey reports whether a NIC target or iface names a connection's
// setting (a Key), well formed or not.
func IsNMKey(s string) bool { return strings.HasPrefix(s, nmKeyPrefix) }

// nmPersistence persists in the NetworkManager connection (nmcli
// connection modify UUID ethtool.…, the previous values journalled) when
// its UUID is known and NetworkManager takes every setting: offloads from
// 1.14, ring sizes from 1.26.
func nmPersistence(nic facts.NIC, set map[string]string) (nicPersistence, bool) {
	ps := nic.Persist
	need := 14
	var args []string
	for _, s := range sortedKeys(set) {
		prop := "ethtool.feature-" + s
		if s == "rx" || s == "tx" {
			need, prop = 26, "ethtool.ring-"+s
		}
		args = append(args, prop+" "+set[s])
	}
	if !safe.NMUUID(ps.ConnectionUUID) || !versionAtLeast(ps.NMVersion, 1, need) {
		return nicPersistence{}, false
	}
	return nicPersistence{
		path: fmt.Sprintf("NetworkManager connection %q", ps.Connection),
		nm:   NMConnection(ps.ConnectionUUID),
		note: fmt.Sprintf("persisted in NetworkManager connection %q (nmcli connection modify %s %s; the previous values are journalled for rollback): NetworkManager applies it when the connection is next activated",
			ps.Connection, ps.ConnectionUUID, strings.Join(args, " ")),
	}, true
}

// nicRules is the rules that asked for changes on an interface, joined.
func (p *planner) nicRules(ifc string) []string {
	var rs []string
	for _, target := range sortedKeys(p.nic) {
		if i, _, _ := strings.Cut(target, " "); i == ifc {
			for _, r := range p.nic[target].rules {
				rs = appendRule(rs, r)
			}
		}
	}
	return rs
}

var reMajorMinor = regexp.MustCompile(`^(\d+)\.(\d+)`)

// versionAtLeast compares a NetworkManager version ("1.42.2-1.el9") with
// major.minor.
func versionAtLeast(v string, major, minor int) bool {
	m := reMajorMinor.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return ma > major || (ma == major && mi >= minor)
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}
