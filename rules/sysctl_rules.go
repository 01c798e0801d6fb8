package rules

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

func evalSynBacklog(c *evalCtx) Finding {
	a := c.kernel()
	cookies, _, cookiesOK := c.sysctl(KeySyncookies)
	var why string
	switch {
	case a.series != "" && cmpSeries(a.series, "4.4") < 0:
		backlog := DefaultListenBacklog
		for _, l := range c.f.Listeners {
			if l.Port == c.kafkaPort() {
				backlog = l.Backlog
			}
		}
		tmsb, _, ok := c.sysctlInt("net.ipv4.tcp_max_syn_backlog")
		if ok {
			why = fmt.Sprintf("on this %s kernel (before 4.4) it caps the SYN queue: roundup_pow_of_two(max(min(backlog, tcp_max_syn_backlog), 8) + 1) = %d for a backlog of %d", a.series, synQueue34(backlog, tmsb), backlog)
		} else {
			why = "before Linux 4.4 it caps the SYN queue: roundup_pow_of_two(max(min(backlog, tcp_max_syn_backlog), 8) + 1)"
		}
	case cookiesOK && cookies == "0":
		why = "tcp_syncookies=0 here, so it matters: when the SYN queue fills, the last quarter of tcp_max_syn_backlog is kept for proven peers and other SYNs are dropped (on kernels ≥ 4.4 the listen backlog, min(backlog, somaxconn), still bounds the queue)"
	default:
		why = "on kernels ≥ 4.4 it only matters when tcp_syncookies=0: with cookies on, cookies start when pending SYNs reach the listen backlog, min(backlog, somaxconn), so raising it alone changes nothing; it is kept at the target for when cookies are turned off"
	}
	fd := c.checkItems(why)
	if fd.Status == Pass {
		fd.Reason = c.passText(c.rule.Check.Pass) + "; " + why
	}
	return fd
}

// synQueue34 is the SYN queue size on kernels before 4.4.
func synQueue34(backlog, tcpMaxSynBacklog int) int {
	n := max(min(backlog, tcpMaxSynBacklog), 8) + 1
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

func evalCongestionControl(c *evalCtx) Finding {
	fd := c.checkItems(c.rule.Check.Why)
	if fd.Status == Pass {
		fd.Reason = c.passText(c.rule.Check.Pass)
		return fd
	}
	a := c.kernel()
	if fd.Fix != nil && c.p.CongestionControl == "bbr" && a.series != "" && cmpSeries(a.series, "4.9") < 0 {
		delete(fd.Fix.Sysctl, "net.ipv4.tcp_congestion_control")
		delete(fd.Fix.Bounds, "net.ipv4.tcp_congestion_control")
		if len(fd.Fix.Bounds) == 0 {
			fd.Fix.Bounds = nil
		}
		if len(fd.Fix.Sysctl) == 0 {
			fd.Fix.Sysctl = nil
		}
		fd.Fix.Manual = "BBR needs Linux ≥ 4.9 (tcp_bbr); this kernel is " + a.release
		fd.Reason += "; BBR is not available before Linux 4.9"
	}
	return fd
}

func evalSysctlPersisted(c *evalCtx) Finding {
	if c.f.Sysctl == nil {
		return unknown(c.notGathered(facts.SecSysctl, "runtime sysctl values"))
	}
	if st, ok := c.f.Sections[facts.SecPersisted]; ok && st.State != facts.SectionAbsent {
		return unknown(c.notGathered(facts.SecPersisted, "persisted sysctl values (sysctl.conf, sysctl.d)"))
	} else if !ok && c.f.Persisted == nil {
		return unknown("persisted sysctl values (sysctl.conf, sysctl.d) not gathered")
	}
	pc := persistCheck{persisted: c.f.Persisted, fix: map[string]string{}, bounds: map[string]Bound{}}
	a := c.kernel()
	// Every key a catalog check names, once: compliant when it meets every
	// check on it, its boot default the first check's.
	var order []string
	byKey := map[string][]SysctlCheck{}
	for _, t := range c.set.checked() {
		if byKey[t.Key] == nil {
			order = append(order, t.Key)
		}
		byKey[t.Key] = append(byKey[t.Key], t)
	}
	for _, key := range order {
		ts := byKey[key]
		compliant := func(s string) bool {
			for _, t := range ts {
				if g, err := t.ok(s, c.p); err != nil || !g {
					return false
				}
			}
			return true
		}
		v, _, found := c.sysctl(key)
		if !found || !compliant(v) {
			continue // the rule for this key reports it
		}
		var exp []string
		for _, t := range ts {
			exp = append(exp, t.expected(c.p))
		}
		def, known, note := ts[0].bootDefault(a, c.p)
		if len(ts) == 1 {
			pc.bounds[key] = ts[0].bound()
		}
		pc.check(key, v, compliant, strings.Join(exp, " and "), def, known, note)
	}
	// tcp_syncookies=0 is a mitigation only while the kernel is not known to be fixed.
	if v, _, found := c.sysctl(KeySyncookies); found && v == "0" && a.status != KernelFixed {
		pc.check(KeySyncookies, v, func(s string) bool { return strings.TrimSpace(s) == "0" }, "0 (mitigation for kernel-synack-wscale)", "1", true, "kernel default")
	}
	return pc.finding(c)
}

// persistCheck collects, key by key, whether a compliant runtime value
// survives a reboot.
type persistCheck struct {
	persisted          map[string]facts.PersistedSysctl
	fails, warns, good []string
	fix                map[string]string
	bounds             map[string]Bound // the direction of each persisted value (its check's)
	checked            int
}

// check one key: its persisted value, else the kernel default (def, when
// defKnown), decides what it is at boot.
func (pc *persistCheck) check(key, runtime string, compliant func(string) bool, expected string, def string, defKnown bool, defNote string) {
	pc.checked++
	if ps, ok := pc.persisted[key]; ok {
		where := fmt.Sprintf("%s:%d", ps.File, ps.Line)
		if compliant(ps.Value) {
			pc.good = append(pc.good, key+" ("+where+")")
			return
		}
		pc.fails = append(pc.fails, fmt.Sprintf("%s: runtime %s, but %s sets %s at boot (want %s)", key, runtime, where, ps.Value, expected))
		pc.fix[key] = runtime
		return
	}
	switch {
	case defKnown && compliant(def):
		pc.good = append(pc.good, key+" (kernel default "+def+")")
	case defKnown:
		pc.fails = append(pc.fails, fmt.Sprintf("%s: runtime %s not persisted: reverts to %s at boot (%s)", key, runtime, def, defNote))
		pc.fix[key] = runtime
	default:
		pc.warns = append(pc.warns, fmt.Sprintf("%s: runtime %s not persisted; the boot value is not known (%s)", key, runtime, defNote))
		pc.fix[key] = runtime
	}
}

func (pc *persistCheck) finding(c *evalCtx) Finding {
	fd := Finding{Expected: "every compliant runtime value also set at boot (sysctl.conf, sysctl.d) or equal to the kernel default"}
	switch {
	case pc.checked == 0:
		return skip("no runtime sysctl value meets its target yet; the rules for each key report them")
	case len(pc.fails) > 0:
		fd.Status = Fail
		fd.Observed = strings.Join(pc.fails, "; ")
		fd.Reason = strings.Join(pc.fails, "; ") + ": the host loses these settings at the next reboot"
		if len(pc.warns) > 0 {
			fd.Reason += " (also: " + strings.Join(pc.warns, "; ") + ")"
		}
	case len(pc.warns) > 0:
		fd.Status, fd.Severity = Warn, c.warning()
		fd.Observed = strings.Join(pc.warns, "; ")
		fd.Reason = strings.Join(pc.warns, "; ") + ": persist them to be sure they survive a reboot"
	default:
		fd.Status = Pass
		fd.Observed = strings.Join(pc.good, ", ")
		fd.Reason = fmt.Sprintf("all %d compliant values survive a reboot", pc.checked)
		return fd
	}
	fd.Fix = &Fix{
		Summary: "persist the current values of " + strings.Join(sortedKeys(pc.fix), ", ") + " in /etc/sysctl.d/99-kaudit.conf (and fix any later file that overrides them)",
		Sysctl:  pc.fix,
	}
	for k := range pc.fix {
		if b, ok := pc.bounds[k]; ok {
			if fd.Fix.Bounds == nil {
				fd.Fix.Bounds = map[string]Bound{}
			}
			fd.Fix.Bounds[k] = b
		}
	}
	return fd
}
