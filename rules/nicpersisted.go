package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// RuleNICPersisted is the rule that checks that a compliant running ring
// or offload is also what the host sets at boot.
const RuleNICPersisted = "nic-persisted"

// evalNICPersisted: for each ring and offload the profile asks for that
// the running NIC already meets (nic-ring and nic-offload pass on it),
// does the boot restore it (facts.NIC.Boot)? A mechanism setting a
// compliant value: pass. One setting a non-compliant value: fail, the
// reboot changes it. Nothing: warn, since kaudit cannot know the driver's
// boot default. Both carry a persist-only fix (Fix.NICPersist) of the
// running value, through the mechanism the planner picks.
func evalNICPersisted(c *evalCtx) Finding {
	if len(c.f.NICs) == 0 {
		return unknown(c.notGathered(facts.SecNICs, "network interfaces (ethtool)"))
	}
	pc := nicPersistCheck{fix: nicFix{}}
	for _, n := range c.f.NICs {
		if n.Boot == nil {
			pc.unread = append(pc.unread, n.Name)
			continue
		}
		pc.rings(n, c.p.NICRing)
		pc.offloads(n, c.p.Offloads)
	}
	if pc.checked == 0 && len(pc.unread) > 0 {
		return unknown("what the host sets on " + strings.Join(pc.unread, ", ") + " at boot was not gathered")
	}
	if pc.checked == 0 {
		return skip("no NIC ring or offload meets its target yet; nic-ring and nic-offload report them")
	}
	fd := Finding{Expected: "every compliant running ring size and offload also set at boot (systemd .link, udev rule, NetworkManager, ifupdown, ifcfg)"}
	note := ""
	if len(pc.unread) > 0 {
		note = " (boot settings not gathered for " + strings.Join(pc.unread, ", ") + ")"
	}
	switch {
	case len(pc.fails) > 0:
		fd.Status = Fail
		fd.Observed = strings.Join(append(pc.fails, pc.warns...), "; ")
		fd.Reason = strings.Join(pc.fails, "; ") + ": the next reboot changes them" + note
		if len(pc.warns) > 0 {
			fd.Reason += " (also: " + strings.Join(pc.warns, "; ") + ")"
		}
	case len(pc.warns) > 0:
		fd.Status, fd.Severity = Warn, c.warning()
		fd.Observed = strings.Join(pc.warns, "; ")
		fd.Reason = strings.Join(pc.warns, "; ") + note
	default:
		fd.Status = Pass
		fd.Observed = strings.Join(pc.good, ", ")
		fd.Reason = fmt.Sprintf("all %d compliant NIC settings are set at boot", pc.checked) + note
		return fd
	}
	fd.Fix = &Fix{
		Summary:    "persist the running values (" + pc.fixList() + ") with the host's network configuration, without changing them now",
		NICPersist: pc.fix,
		WhenWarn:   true,
	}
	return fd
}

// nicPersistCheck collects, setting by setting, whether a compliant
// running NIC value survives a reboot.
type nicPersistCheck struct {
	fails, warns, good []string
	unread             []string
	fix                nicFix
	checked            int
}

func (pc *nicPersistCheck) fixList() string {
	var out []string
	for _, n := range sortedKeys(pc.fix) {
		for _, s := range sortedKeys(pc.fix[n]) {
			out = append(out, n+" "+s+" "+pc.fix[n][s])
		}
	}
	return strings.Join(out, ", ")
}

// check one setting whose running value is compliant: compliant says
// whether a boot value is.
func (pc *nicPersistCheck) check(n facts.NIC, setting, running string, compliant func(string) bool) {
	pc.checked++
	what := n.Name + " " + setting
	bv, ok := n.Boot.Settings[setting]
	switch {
	case ok && compliant(bv.Value):
		pc.good = append(pc.good, fmt.Sprintf("%s %s (%s)", what, bv.Value, bv.Source))
	case ok:
		pc.fails = append(pc.fails, fmt.Sprintf("%s: running %s, but %s sets %s at boot", what, running, bv.Source, bv.Value))
		pc.fix.want(n.Name, setting, running)
	default:
		w := fmt.Sprintf("nothing on the host sets %s at boot: if it was set at runtime (by hand, or by an interrupted run) it reverts at the next reboot to the driver's default", what)
		if len(n.Boot.Unsure) > 0 {
			w += " (not settled: " + strings.Join(n.Boot.Unsure, "; ") + ")"
		}
		pc.warns = append(pc.warns, w)
		pc.fix.want(n.Name, setting, running)
	}
}

// rings checks the rx and tx rings that meet min(target, maximum).
func (pc *nicPersistCheck) rings(n facts.NIC, target int) {
	r := n.Ring
	if r == nil {
		return
	}
	for _, name := range []string{"rx", "tx"} {
		cur, top := r.Size(name)
		want := target
		if top > 0 && top < want {
			want = top
		}
		if cur < 0 || top <= 0 || cur < want {
			continue // n/a, or nic-ring reports it
		}
		pc.check(n, name, strconv.Itoa(cur), func(v string) bool {
			if v == "max" {
				return top >= want
			}
			x, err := strconv.Atoi(v)
			return err == nil && min(x, top) >= want
		})
	}
}

// offloads checks the profile's offloads that are on and can change.
func (pc *nicPersistCheck) offloads(n facts.NIC, offloads []string) {
	for _, name := range offloads {
		ft, ok := n.Features[name]
		if !ok || !ft.On || ft.Fixed {
			continue // off: nic-offload reports it; [fixed] on cannot revert
		}
		pc.check(n, name, "on", func(v string) bool { return v == "on" })
	}
}
