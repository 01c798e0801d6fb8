package remediate

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/safe"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/nicpersist"
	"github.com/kaudit/kaudit/rules"
)

// NICPersistPath is kaudit's udev rule file (nicpersist.UdevPath),
// LinkPath its .link file of an interface (nicpersist.LinkPath).
const NICPersistPath = nicpersist.UdevPath

var LinkPath = nicpersist.LinkPath

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
			p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("the %s driver of %s has no ring settings (ethtool -g: %s)", rules.NICDriver(nic), ifc, reason),
				"nothing to change on this host; waive the finding here")
			return
		}
		reason = cmp.Or(reason, "not read")
		p.warn("%s: %s ring sizes are unavailable (%s): %s not planned", rule, ifc, reason, target)
		return
	}
	cur, top := nic.Ring.Size(setting)
	if top <= 0 {
		shown := "n/a"
		if top == 0 {
			shown = "0"
		}
		p.cannotNIC(rule, KindNICRing, target, value, fmt.Sprintf("%s reports no %s ring maximum (Pre-set maximums %s: %s): kaudit never sets a ring above the pre-set maximum", ifc, setting, strings.ToUpper(setting), shown),
			fmt.Sprintf("nothing kaudit can check on this host: if the %s driver documents a larger %s ring, set it with ethtool -G %s %s N yourself", rules.NICDriver(nic), setting, ifc, setting))
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
		p.cannotNIC(rule, KindNICOffload, target, want, fmt.Sprintf("%s cannot be turned %s: it is %s [fixed] by the %s driver", setting, want, words.OnOff(feat.On), rules.NICDriver(nic)),
			fmt.Sprintf("nothing to change on this host: the %s driver does not let it change; waive the finding here", rules.NICDriver(nic)))
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
		if cur, _ := nic.Ring.Size(setting); strconv.Itoa(cur) != value {
			p.warn("%s: %s runs %d, not %s: not persisted", rule, target, cur, value)
			return
		}
	default:
		ft, ok := nic.Features[setting]
		if !ok || words.OnOff(ft.On) != value {
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
	persistBy := map[string]nicpersist.Plan{} // the host's own mechanism, else the udev rule
	for _, ifc := range sortedKeys(perIface) {
		if nic := p.findNIC(ifc); nic != nil {
			pl := nicpersist.PlanFor(*nic, perIface[ifc])
			if pl.Manual != "" {
				p.addManualFor(p.nicRules(nic.Name), pl.Manual)
			}
			if pl.Warn != "" {
				p.warn("%s", pl.Warn)
			}
			persistBy[ifc] = pl
		}
	}
	var changes []Change
	for _, target := range sortedKeys(p.nic) {
		ifc, setting, _ := strings.Cut(target, " ")
		var nic facts.NIC
		if n := p.findNIC(ifc); n != nil {
			nic = *n
		}
		c := p.nicChange(target, nic, persistBy[ifc])
		if why, beaten := persistBy[ifc].Beaten[setting]; beaten {
			for _, r := range c.Rules {
				p.cannotNIC(r, c.Kind, target, c.To, why, "change it there (or remove it), then rerun kaudit")
			}
		} else if c = p.keep(c); c.Kind != "" {
			changes = append(changes, c)
		}
	}
	return changes
}

func (p *planner) nicChange(target string, nic facts.NIC, np nicpersist.Plan) Change {
	r := p.nic[target]
	_, setting, _ := strings.Cut(target, " ")
	c := Change{
		Host: p.host, Rules: r.rules, Target: target, To: r.to,
		Runtime: !r.persistOnly, Persist: true, PersistPath: np.Path, PersistMatch: PersistMatch(np.Match), NM: NMConnection(np.NM),
	}
	switch setting {
	case "rx", "tx":
		c.Kind = KindNICRing
		cur, top := nic.Ring.Size(setting)
		if cur >= 0 {
			c.From = strconv.Itoa(cur)
		}
		c.Note = "changing ring sizes resets the NIC on many drivers (a brief link drop)"
		if r.to == strconv.Itoa(top) {
			c.Note += fmt.Sprintf("\n%d is the NIC's pre-set maximum", top)
		}
	default:
		c.Kind = KindNICOffload
		c.From = words.OnOff(nic.Features[setting].On)
	}
	if r.persistOnly {
		// Nothing changes on the running NIC: no link reset either.
		c.Note = fmt.Sprintf("already %s now, but not what the host sets at boot: persisted only (the running NIC is not touched)", r.to)
	}
	if np.Note != "" {
		c.Note = strings.TrimPrefix(c.Note+"\n"+np.Note, "\n")
	}
	return c
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
