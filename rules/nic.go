package rules

import (
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
	var obs, bad, skipped, unreadable []string
	fix := map[string]map[string]string{}
	checked := 0
	for _, n := range c.f.NICs {
		if n.Ring == nil {
			why := n.RingErr
			if why == "" {
				why = "ring settings not reported"
			}
			// Only the driver saying "not supported" settles it; a missing
			// ethtool, a permission problem or an error does not.
			if strings.Contains(strings.ToLower(why), "not supported") {
				skipped = append(skipped, n.Name+": "+why)
			} else {
				unreadable = append(unreadable, n.Name+": "+why)
			}
			continue
		}
		checked++
		r := n.Ring
		for _, d := range []struct {
			name     string
			cur, max int
		}{{"rx", r.RX, r.RXMax}, {"tx", r.TX, r.TXMax}} {
			if d.cur < 0 {
				continue // n/a for this driver
			}
			want := target
			if d.max > 0 && d.max < want {
				want = d.max
			}
			obs = append(obs, fmt.Sprintf("%s %s %d (max %s)", n.Name, d.name, d.cur, maxStr(d.max)))
			if d.cur < want {
				bad = append(bad, fmt.Sprintf("%s %s ring %d < %d", n.Name, d.name, d.cur, want))
				if fix[n.Name] == nil {
					fix[n.Name] = map[string]string{}
				}
				fix[n.Name][d.name] = fmt.Sprint(want)
			}
		}
	}
	if checked == 0 && len(unreadable) > 0 {
		return unknown("ring settings could not be read (" + strings.Join(append(unreadable, skipped...), "; ") + ")")
	}
	if checked == 0 {
		return skip("no NIC supports ring settings (" + strings.Join(skipped, "; ") + ")")
	}
	skipped = append(skipped, unreadable...)
	fd := Finding{Observed: strings.Join(obs, ", "), Expected: fmt.Sprintf("rx/tx >= min(%d, NIC maximum)", target)}
	note := ""
	if len(skipped) > 0 {
		note = " (skipped " + strings.Join(skipped, "; ") + ")"
	}
	if len(bad) == 0 {
		fd.Status = Pass
		fd.Reason = "ring buffers meet min(target, maximum)" + note
		return fd
	}
	fd.Status, fd.Severity = Fail, Medium
	fd.Reason = strings.Join(bad, "; ") + ": small rings drop packets in bursts before the kernel sees them" + note
	fd.Fix = &Fix{
		Summary: "raise ring sizes with ethtool -G (capped at each NIC's maximum) and persist them; the link may reset briefly",
		NIC:     fix,
	}
	return fd
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
	var obs, bad, fixedOff, missing, errs []string
	fix := map[string]map[string]string{}
	checked := 0
	for _, n := range c.f.NICs {
		if len(n.Features) == 0 {
			why := n.FeatErr
			if why == "" {
				why = "features not reported"
			}
			errs = append(errs, n.Name+": "+why)
			continue
		}
		checked++
		var parts []string
		for _, name := range c.p.Offloads {
			ft, ok := n.Features[name]
			switch {
			case !ok:
				missing = append(missing, n.Name+" "+name)
				continue
			case ft.On:
				parts = append(parts, name+" on")
			case ft.Fixed:
				parts = append(parts, name+" off [fixed]")
				fixedOff = append(fixedOff, n.Name+" "+name)
			default:
				parts = append(parts, name+" off")
				bad = append(bad, n.Name+" "+name+" off")
				if fix[n.Name] == nil {
					fix[n.Name] = map[string]string{}
				}
				fix[n.Name][name] = "on"
			}
		}
		obs = append(obs, n.Name+": "+strings.Join(parts, ", "))
	}
	if checked == 0 {
		return unknown("no NIC's offload features were read (" + strings.Join(errs, "; ") + ")")
	}
	sort.Strings(bad)
	fd := Finding{Observed: strings.Join(obs, "; "), Expected: strings.Join(c.p.Offloads, ", ") + " on (unless [fixed] off)"}
	var notes []string
	if len(fixedOff) > 0 {
		notes = append(notes, strings.Join(fixedOff, ", ")+" off but [fixed]: the NIC cannot enable it, not a failure")
	}
	if len(missing) > 0 {
		notes = append(notes, "not reported: "+strings.Join(missing, ", "))
	}
	if len(errs) > 0 {
		notes = append(notes, "not read: "+strings.Join(errs, "; "))
	}
	note := ""
	if len(notes) > 0 {
		note = " (" + strings.Join(notes, "; ") + ")"
	}
	if len(bad) == 0 {
		fd.Status = Pass
		fd.Reason = "offloads are on where the NIC allows them" + note
		return fd
	}
	fd.Status, fd.Severity = Fail, Medium
	fd.Reason = strings.Join(bad, ", ") + " and not [fixed]: the kernel and NIC handle MTU-sized packets instead of large segments, costing CPU per byte" + note
	fd.Fix = &Fix{Summary: "enable the offloads with ethtool -K and persist them", NIC: fix}
	return fd
}
