package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// sysctlTarget is one sysctl the profile (or a fixed rule) targets.
type sysctlTarget struct {
	key        string
	profileKey string // "" for fixed targets (fixed holds the value)
	fixed      string // fixed target value: tcp_timestamps, tcp_window_scaling
	third      bool   // compare the third (max) field: tcp_rmem, tcp_wmem
	str        bool   // string equality instead of >=
	// def is the value the kernel boots with when nothing is persisted:
	// known=false when it depends on the host.
	def func(a kernelAnalysis, p Profile) (value string, known bool, note string)
}

const skMemMax = "212992" // SK_WMEM_MAX/SK_RMEM_MAX on 64-bit builds

var sysctlTargets = []sysctlTarget{
	{key: KeySomaxconn, profileKey: "somaxconn", def: func(a kernelAnalysis, _ Profile) (string, bool, string) {
		switch {
		case a.series == "":
			return "", false, "128 before Linux 5.4, 4096 from 5.4; the kernel version is not known"
		case cmpSeries(a.series, "5.4") < 0:
			return "128", true, "kernel default before 5.4"
		}
		return "4096", true, "kernel default from 5.4"
	}},
	{key: "net.ipv4.tcp_max_syn_backlog", profileKey: "tcp_max_syn_backlog", def: func(kernelAnalysis, Profile) (string, bool, string) {
		return "", false, "the kernel default scales with memory (at least 128)"
	}},
	{key: KeyTimestamps, fixed: "1", def: fixedDef("1")},
	{key: KeyWindowScaling, fixed: "1", def: fixedDef("1")},
	{key: "net.core.rmem_max", profileKey: "rmem_max", def: fixedDef(skMemMax)},
	{key: "net.core.wmem_max", profileKey: "wmem_max", def: fixedDef(skMemMax)},
	{key: "net.ipv4.tcp_rmem", profileKey: "tcp_rmem_max", third: true, def: func(_ kernelAnalysis, p Profile) (string, bool, string) {
		return "4096 131072 6291456", p.TCPRmemMax > 6291456, "its max field is at most 6291456, lower on small-memory hosts"
	}},
	{key: "net.ipv4.tcp_wmem", profileKey: "tcp_wmem_max", third: true, def: func(_ kernelAnalysis, p Profile) (string, bool, string) {
		return "4096 16384 4194304", p.TCPWmemMax > 4194304, "its max field is at most 4194304, lower on small-memory hosts"
	}},
	{key: "net.core.rmem_default", profileKey: "rmem_default", def: fixedDef(skMemMax)},
	{key: "net.core.wmem_default", profileKey: "wmem_default", def: fixedDef(skMemMax)},
	{key: "net.ipv4.tcp_congestion_control", profileKey: "congestion_control", str: true, def: fixedDef("cubic")},
	{key: "net.core.default_qdisc", profileKey: "default_qdisc", str: true, def: func(kernelAnalysis, Profile) (string, bool, string) {
		return "pfifo_fast", false, "pfifo_fast unless the kernel was built with another CONFIG_DEFAULT_NET_SCH (systemd's 50-default.conf, when installed, would show up as persisted fq_codel)"
	}},
}

func fixedDef(v string) func(kernelAnalysis, Profile) (string, bool, string) {
	return func(kernelAnalysis, Profile) (string, bool, string) { return v, true, "kernel default" }
}

func targetFor(key string) sysctlTarget {
	for _, t := range sysctlTargets {
		if t.key == key {
			return t
		}
	}
	panic("rules: no sysctl target " + key)
}

// wantInt is the numeric target (>=).
func (t sysctlTarget) wantInt(p Profile) int {
	if t.fixed != "" {
		n, _ := strconv.Atoi(t.fixed)
		return n
	}
	return *profileKeys[t.profileKey].ints(&p)
}

func (t sysctlTarget) wantStr(p Profile) string {
	if t.fixed != "" {
		return t.fixed
	}
	return *profileKeys[t.profileKey].str(&p)
}

func (t sysctlTarget) expected(p Profile) string {
	switch {
	case t.str:
		return t.wantStr(p)
	case t.fixed != "":
		return t.fixed
	case t.third:
		return fmt.Sprintf("max field >= %d", t.wantInt(p))
	}
	return fmt.Sprintf(">= %d", t.wantInt(p))
}

// ok says whether value meets the target.
func (t sysctlTarget) ok(value string, p Profile) (bool, error) {
	value = strings.Join(strings.Fields(value), " ")
	switch {
	case t.str:
		return value == t.wantStr(p), nil
	case t.key == KeyTimestamps: // 1 and 2 both enable timestamps
		if value != "0" && value != "1" && value != "2" {
			return false, fmt.Errorf("%s=%q is not 0, 1 or 2", t.key, value)
		}
		return value != "0", nil
	case t.fixed != "":
		return value == t.fixed, nil
	}
	n, err := t.number(value)
	if err != nil {
		return false, err
	}
	return n >= t.wantInt(p), nil
}

func (t sysctlTarget) number(value string) (int, error) {
	f := strings.Fields(value)
	if t.third {
		if len(f) != 3 {
			return 0, fmt.Errorf("%s=%q does not have 3 fields", t.key, value)
		}
		f = f[2:]
	}
	if len(f) != 1 {
		return 0, fmt.Errorf("%s=%q is not an integer", t.key, value)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an integer", t.key, value)
	}
	return n, nil
}

// fixValue is the value to set: the target, keeping tcp_rmem/tcp_wmem's first two fields.
func (t sysctlTarget) fixValue(current string, p Profile) string {
	switch {
	case t.str:
		return t.wantStr(p)
	case t.third:
		f := strings.Fields(current)
		if len(f) == 3 {
			return fmt.Sprintf("%s %s %d", f[0], f[1], t.wantInt(p))
		}
		return fmt.Sprintf("4096 87380 %d", t.wantInt(p))
	}
	return strconv.Itoa(t.wantInt(p))
}

// checkSysctls evaluates a group of targets. Missing values make the result
// unknown unless something already fails.
func checkSysctls(c *evalCtx, sev Severity, keys []string, why string) Finding {
	if c.f.Sysctl == nil {
		return unknown(c.notGathered(facts.SecSysctl, "sysctl values"))
	}
	var obs, bad, missing, exp []string
	fix := map[string]string{}
	for _, key := range keys {
		t := targetFor(key)
		exp = append(exp, key+" "+t.expected(c.p))
		v, miss, found := c.sysctl(key)
		if !found {
			missing = append(missing, miss)
			continue
		}
		obs = append(obs, key+"="+v)
		good, err := t.ok(v, c.p)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		if !good {
			bad = append(bad, fmt.Sprintf("%s=%s (want %s)", key, v, t.expected(c.p)))
			fix[key] = t.fixValue(v, c.p)
		}
	}
	fd := Finding{Observed: strings.Join(obs, ", "), Expected: strings.Join(exp, ", ")}
	switch {
	case len(bad) > 0:
		fd.Status, fd.Severity = Fail, sev
		fd.Reason = strings.Join(bad, "; ") + ": " + why
		if len(missing) > 0 {
			fd.Reason += " (also unknown: " + strings.Join(missing, "; ") + ")"
		}
		fd.Fix = &Fix{Summary: "set " + strings.Join(sortedKeys(fix), ", ") + " and persist", Sysctl: fix}
	case len(missing) > 0:
		fd.Status = Unknown
		fd.Reason = strings.Join(missing, "; ")
	default:
		fd.Status = Pass
		fd.Reason = "meets the target"
	}
	return fd
}

func evalSomaxconn(c *evalCtx) Finding {
	fd := checkSysctls(c, Medium, []string{KeySomaxconn}, "the kernel caps every listen backlog at somaxconn, so the Kafka listener cannot queue more pending connections than this whatever it asks for; the broker picks up a new value only when it listens again (restart)")
	if fd.Status == Pass {
		fd.Reason = fmt.Sprintf("net.core.somaxconn ≥ %d: it does not cap a listen backlog up to the target", c.p.Somaxconn)
	}
	if fd.Fix != nil {
		fd.Fix.Restart = true
		fd.Fix.Summary += "; restart the broker so its listener uses it"
	}
	return fd
}

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
	fd := checkSysctls(c, Low, []string{"net.ipv4.tcp_max_syn_backlog"}, why)
	if fd.Status == Pass {
		fd.Reason = fmt.Sprintf("tcp_max_syn_backlog ≥ %d; %s", c.p.TCPMaxSynBacklog, why)
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

func evalTCPTimestamps(c *evalCtx) Finding {
	fd := checkSysctls(c, High, []string{KeyTimestamps}, "SYN cookies carry the window scale (and SACK) in the TCP timestamp option; without timestamps a cookie connection loses its window scale and is limited to a 64 KiB window")
	if fd.Status == Pass {
		fd.Reason = "TCP timestamps are enabled, so SYN cookies can carry the window scale"
		if v, _, _ := c.sysctl(KeyTimestamps); v == "2" {
			fd.Reason += " (2: enabled without per-connection random offsets)"
		}
	}
	return fd
}

func evalWindowScaling(c *evalCtx) Finding {
	fd := checkSysctls(c, High, []string{KeyWindowScaling}, "without window scaling a TCP window cannot exceed 64 KiB, which caps every connection's throughput at 64 KiB per round trip")
	if fd.Status == Pass {
		fd.Reason = "TCP window scaling is enabled"
	}
	return fd
}

func evalSocketBuffers(c *evalCtx) Finding {
	fd := checkSysctls(c, Low, []string{"net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_default", "net.core.wmem_default"},
		"below the tuning guide's targets: the max values cap SO_RCVBUF/SO_SNDBUF requests and TCP autotuning, which limits throughput on high-latency (cross-region) links")
	if fd.Status == Pass {
		fd.Reason = "socket buffer limits meet the profile's targets"
	}
	return fd
}

func evalCongestionControl(c *evalCtx) Finding {
	fd := checkSysctls(c, Info, []string{"net.ipv4.tcp_congestion_control", "net.core.default_qdisc"},
		"the tuning guide recommends BBR with fq for throughput and fewer retransmits on high-latency links; informational")
	if fd.Status == Pass {
		fd.Reason = fmt.Sprintf("congestion control %s with qdisc %s", c.p.CongestionControl, c.p.DefaultQdisc)
		return fd
	}
	a := c.kernel()
	if fd.Fix != nil && c.p.CongestionControl == "bbr" && a.series != "" && cmpSeries(a.series, "4.9") < 0 {
		delete(fd.Fix.Sysctl, "net.ipv4.tcp_congestion_control")
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
	if st, ok := c.f.Sections[facts.SecPersisted]; ok && st.State != "absent" {
		return unknown(c.notGathered(facts.SecPersisted, "persisted sysctl values (sysctl.conf, sysctl.d)"))
	} else if !ok && c.f.Persisted == nil {
		return unknown("persisted sysctl values (sysctl.conf, sysctl.d) not gathered")
	}
	pc := persistCheck{persisted: c.f.Persisted, fix: map[string]string{}}
	a := c.kernel()
	for _, t := range sysctlTargets {
		v, _, found := c.sysctl(t.key)
		if !found {
			continue
		}
		if good, err := t.ok(v, c.p); err != nil || !good {
			continue // the rule for this key reports it
		}
		def, known, note := t.def(a, c.p)
		pc.check(t.key, v, func(s string) bool { g, err := t.ok(s, c.p); return err == nil && g }, t.expected(c.p), def, known, note)
	}
	// tcp_syncookies=0 is a mitigation only while the kernel is not known to be fixed.
	if v, _, found := c.sysctl(KeySyncookies); found && v == "0" && a.status != KernelFixed {
		pc.check(KeySyncookies, v, func(s string) bool { return strings.TrimSpace(s) == "0" }, "0 (mitigation for kernel-synack-wscale)", "1", true, "kernel default")
	}
	return pc.finding()
}

// persistCheck collects, key by key, whether a compliant runtime value
// survives a reboot.
type persistCheck struct {
	persisted          map[string]facts.PersistedSysctl
	fails, warns, good []string
	fix                map[string]string
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

func (pc *persistCheck) finding() Finding {
	fd := Finding{Expected: "every compliant runtime value also set at boot (sysctl.conf, sysctl.d) or equal to the kernel default"}
	switch {
	case pc.checked == 0:
		return skip("no runtime sysctl value meets its target yet; the rules for each key report them")
	case len(pc.fails) > 0:
		fd.Status, fd.Severity = Fail, Medium
		fd.Observed = strings.Join(pc.fails, "; ")
		fd.Reason = strings.Join(pc.fails, "; ") + ": the host loses these settings at the next reboot"
		if len(pc.warns) > 0 {
			fd.Reason += " (also: " + strings.Join(pc.warns, "; ") + ")"
		}
	case len(pc.warns) > 0:
		fd.Status, fd.Severity = Warn, Low
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
	return fd
}
