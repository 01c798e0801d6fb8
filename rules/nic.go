package rules

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

func evalNICRing(c *evalCtx) Finding {
	if len(c.f.NICs) == 0 {
		return unknown(c.notGathered(facts.SecNICs, "network interfaces (ethtool)"))
	}
	target := c.p.NICRing
	rc := nicCheck{fix: nicFix{}}
	for _, n := range c.f.NICs {
		rc.ring(n, target)
	}
	if rc.checked == 0 && len(rc.unreadable) > 0 {
		return unknown("ring settings could not be read (" + strings.Join(append(rc.unreadable, rc.skipped...), "; ") + ")")
	}
	if rc.checked == 0 {
		return skip("no NIC supports ring settings (" + strings.Join(rc.skipped, "; ") + ")")
	}
	skipped := append(rc.skipped, rc.unreadable...)
	fd := Finding{Observed: strings.Join(rc.obs, ", "), Expected: fmt.Sprintf("rx/tx >= min(%d, NIC maximum)", target)}
	note := ""
	if len(skipped) > 0 {
		note = " (skipped " + strings.Join(skipped, "; ") + ")"
	}
	if len(rc.bad) == 0 {
		fd.Status = Pass
		fd.Reason = "ring buffers meet min(target, maximum)" + note
		return fd
	}
	fd.Status = Fail
	fd.Reason = strings.Join(rc.bad, "; ") + ": small rings drop packets in bursts before the kernel sees them" + note
	fd.Fix = &Fix{
		Summary: "raise ring sizes with ethtool -G (capped at each NIC's maximum) and persist them; the link may reset briefly",
		NIC:     rc.fix,
	}
	return fd
}

// nicCheck collects, NIC by NIC, what nic-ring or nic-offload observed.
type nicCheck struct {
	obs, bad            []string
	skipped, unreadable []string // ring: not supported / not read
	fixedOff, missing   []string // offload: [fixed] off / not reported
	cannot              []string // offload: off, and the NIC cannot take it on (OffloadBlocked)
	blocked             nicFix
	fix                 nicFix
	checked             int
}

// nicFix is a fix's NIC settings: interface → setting → value.
type nicFix map[string]map[string]string

func (f nicFix) want(nic, setting, value string) {
	if f[nic] == nil {
		f[nic] = map[string]string{}
	}
	f[nic][setting] = value
}

// ring checks one NIC's rx and tx rings against min(target, its maximum).
func (rc *nicCheck) ring(n facts.NIC, target int) {
	if n.Ring == nil {
		why := cmp.Or(n.RingErr, "ring settings not reported")
		// Only the driver saying "not supported" settles it; a missing
		// ethtool, a permission problem or an error does not.
		if strings.Contains(strings.ToLower(why), "not supported") {
			rc.skipped = append(rc.skipped, n.Name+": "+why)
		} else {
			rc.unreadable = append(rc.unreadable, n.Name+": "+why)
		}
		return
	}
	rc.checked++
	r := n.Ring
	for _, name := range []string{"rx", "tx"} {
		cur, top := r.Size(name)
		if cur < 0 {
			continue // n/a for this driver
		}
		want := target
		if top > 0 && top < want {
			want = top
		}
		rc.obs = append(rc.obs, fmt.Sprintf("%s %s %d (max %s)", n.Name, name, cur, maxStr(top)))
		if cur < want {
			rc.bad = append(rc.bad, fmt.Sprintf("%s %s ring %d < %d", n.Name, name, cur, want))
			rc.fix.want(n.Name, name, fmt.Sprint(want))
		}
	}
}

func maxStr(m int) string {
	if m <= 0 {
		return "n/a"
	}
	return fmt.Sprint(m)
}

func evalNICOffload(c *evalCtx) Finding {
	if len(c.f.NICs) == 0 {
		return unknown(c.notGathered(facts.SecNICs, "network interfaces (ethtool)"))
	}
	oc := nicCheck{fix: nicFix{}}
	for _, n := range c.f.NICs {
		oc.offload(n, c.p.Offloads)
	}
	if oc.checked == 0 {
		return unknown("no NIC's offload features were read (" + strings.Join(oc.unreadable, "; ") + ")")
	}
	sort.Strings(oc.bad)
	fd := Finding{Observed: strings.Join(oc.obs, "; "), Expected: strings.Join(c.p.Offloads, ", ") + " on (unless [fixed] off)"}
	var notes []string
	if len(oc.fixedOff) > 0 {
		notes = append(notes, strings.Join(oc.fixedOff, ", ")+" off but [fixed]: the NIC cannot enable it, not a failure")
	}
	if len(oc.missing) > 0 {
		notes = append(notes, "not reported: "+strings.Join(oc.missing, ", "))
	}
	if len(oc.unreadable) > 0 {
		notes = append(notes, "not read: "+strings.Join(oc.unreadable, "; "))
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	cannot := ""
	if len(oc.cannot) > 0 {
		cannot = "the NIC cannot: " + strings.Join(oc.cannot, "; ")
	}
	switch {
	case len(oc.bad) == 0 && cannot != "":
		// Not a failure no fix can clear: the plan lists these under
		// "cannot apply" (the same OffloadBlocked decides both), which
		// is why the fix still names them.
		fd.Status, fd.Severity = Warn, c.warning()
		fd.Reason = cannot + note
		fd.Fix = &Fix{Summary: "nothing kaudit can apply: the NIC cannot take it on (a fix plan lists it under cannot apply, with what to do instead)", NIC: oc.blocked, WhenWarn: true}
		return fd
	case len(oc.bad) == 0:
		fd.Status = Pass
		fd.Reason = "offloads are on where the NIC allows them" + note
		return fd
	}
	if cannot != "" {
		note += " (" + cannot + ")"
	}
	fd.Status = Fail
	fd.Reason = strings.Join(oc.bad, ", ") + " and not [fixed]: the kernel and NIC handle MTU-sized packets instead of large segments, costing CPU per byte" + note
	for ifc, set := range oc.blocked {
		for k, v := range set {
			oc.fix.want(ifc, k, v) // planned as "cannot apply", with the reason
		}
	}
	fd.Fix = &Fix{Summary: "enable the offloads with ethtool -K and persist them", NIC: oc.fix}
	return fd
}

// offload checks one NIC's offload features: each should be on unless the
// driver fixes it off.
func (oc *nicCheck) offload(n facts.NIC, offloads []string) {
	if len(n.Features) == 0 {
		why := cmp.Or(n.FeatErr, "features not reported")
		oc.unreadable = append(oc.unreadable, n.Name+": "+why)
		return
	}
	oc.checked++
	var parts []string
	for _, name := range offloads {
		ft, ok := n.Features[name]
		switch {
		case !ok:
			oc.missing = append(oc.missing, n.Name+" "+name)
			continue
		case ft.On:
			parts = append(parts, name+" on")
		case ft.Fixed:
			parts = append(parts, name+" off [fixed]")
			oc.fixedOff = append(oc.fixedOff, n.Name+" "+name)
		default:
			if reason, instead := OffloadBlocked(&n, name); reason != "" {
				// A [fixed] dependency, a refusal ("[requested on]"), or a
				// dependency that is off: ethtool -K of this one alone
				// would not take.
				parts = append(parts, name+" off (cannot be turned on)")
				oc.cannot = append(oc.cannot, n.Name+" "+reason+" ("+instead+")")
				if oc.blocked == nil {
					oc.blocked = nicFix{}
				}
				oc.blocked.want(n.Name, name, "on")
				continue
			}
			parts = append(parts, name+" off")
			oc.bad = append(oc.bad, n.Name+" "+name+" off")
			oc.fix.want(n.Name, name, "on")
		}
	}
	oc.obs = append(oc.obs, n.Name+": "+strings.Join(parts, ", "))
}
