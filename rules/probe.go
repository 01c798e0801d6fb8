package rules

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

// probeNotRun are the probe states in which nothing was measured because the
// probe never started: the verdict stays with the changelog / version
// table, the reason beside it.
var probeNotRun = map[facts.ProbeState]bool{
	facts.ProbeNeedsRoot: true, facts.ProbeNotPerNetns: true,
	facts.ProbeNoPython: true, facts.ProbeUnsupported: true, facts.ProbeUnproven: true,
}

// withProbe lets the SYN-cookie probe (audit/probe) decide the
// kernel's status: it observes the kernel, so it outranks the changelog and
// the version table. In this order:
//
//  1. a connection completed by a SYN cookie (SyncookiesRecv moved) whose
//     client tcpi_snd_wscale differs from the accepted socket's
//     tcpi_rcv_wscale is the bug (the talk's "advertised 1, used 7"):
//     affected, source probe — whatever happened after it (a timeout, an
//     error, a kill: the bug's own stalled transfer often causes them);
//  2. a probe that finished (state ok) whose every case was cookie-completed
//     with equal pairs and whose every transfer flowed in full: fixed,
//     source probe;
//  3. a probe that ran and settled neither (it stopped part way, a
//     connection missed the cookie path, a transfer stalled although the
//     pairs agree): the version table / changelog may not turn it into a
//     pass — a "fixed" from them becomes unknown, with what was measured
//     and why it stopped; an "affected" or "unknown" stays;
//  4. a probe that never ran (needs-root, not-per-netns, no-python, unproven,
//     unsupported) or ran on another kernel leaves the analysis alone and
//     says why in probeNote.
func withProbe(a kernelAnalysis, k facts.Kernel, p *facts.Probe) kernelAnalysis {
	if p == nil {
		return a
	}
	if p.Release != "" && strings.TrimSpace(k.Release) != "" && p.Release != strings.TrimSpace(k.Release) {
		a.probeNote = fmt.Sprintf("probe ran on kernel %s, not %s: ignored", p.Release, k.Release)
		return a
	}
	if probeNotRun[p.State] {
		a.probeNote = "probe " + string(p.State) + ": " + p.Reason
		return a
	}
	release := cmp.Or(p.Release, a.release)
	stopped := ""
	if p.State != facts.ProbeOK {
		stopped = fmt.Sprintf("; the probe then stopped (%s: %s)", p.State, p.Reason)
	}
	if m := probeMismatch(p); m != nil {
		pair := fmt.Sprintf("%d vs %d (SO_RCVBUF %d; %s%s)", m.ClientSndWscale, m.ServerRcvWscale, m.RcvBuf, transferText(*m), against(p))
		if a.status == KernelFixed {
			a.reason = fmt.Sprintf("%s: kernel %s reads as fixed by %s (%s), but this kernel completes SYN-cookie connections with a window scale the client was not told: %s; it lacks commit %s (reverted, or a build without it)%s",
				probeLabel(p), release, sourceName(a.source), a.reason, pair, kernels.Commit[:7], stopped)
		} else {
			a.reason = fmt.Sprintf("%s: with tcp_syncookies=2 this kernel completes SYN-cookie connections with a window scale the client was not told: %s; kernel %s lacks commit %s%s%s",
				probeLabel(p), pair, release, kernels.Commit[:7], without(a), stopped)
		}
		a.status, a.source = KernelAffected, SourceProbe
		return a
	}
	why := probeUnsettled(p)
	if why != "" && p.Recorded {
		why = probeLabel(p) + ": " + why
	}
	if why == "" {
		a.reason = fmt.Sprintf("%s: with tcp_syncookies=2 in a throw-away network namespace, every connection completed by a SYN cookie used the window scale the client was told and its %d KiB flowed (%s): kernel %s handles cookie connections correctly%s",
			probeLabel(p), p.Cases[0].Bytes>>10, probePairs(p), release, without(a))
		a.status, a.source = KernelFixed, SourceProbe
		return a
	}
	if a.status != KernelFixed {
		a.probeNote = why
		return a
	}
	a.reason = fmt.Sprintf("%s; kernel %s reads as fixed by %s (%s), but a probe that ran on it and did not confirm the fix is not overruled by that", why, release, sourceName(a.source), a.reason)
	a.status, a.source = KernelUnknown, ""
	return a
}

// probeLabel names the probe whose result a reason gives: this run's, or
// one kaudit recorded for this boot of the host (audit/probe.Records),
// with when it ran and how old it was when read back.
func probeLabel(p *facts.Probe) string {
	if !p.Recorded {
		return "probe"
	}
	return fmt.Sprintf("proven by probe at %s on this boot (boot id %s, %s before this gather; kaudit's record)",
		p.At.UTC().Format("2006-01-02 15:04 UTC"), shortID(p.BootID), time.Duration(p.AgeS)*time.Second)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}

// withEarlierProbe weighs the last probe kaudit recorded for this host
// when it ran on another boot or kernel (Facts.EarlierProbe): it no longer
// decides, and the reason says the verdict is the version table's or
// changelog's again, with how to settle this boot. One exception, for the
// worst bug (a wrong "you are safe"): when that probe found the bug on
// this same kernel release, a "fixed" read from the release is not
// believed until this boot is probed: unknown.
func withEarlierProbe(a kernelAnalysis, k facts.Kernel, p *facts.Probe) kernelAnalysis {
	if p == nil {
		return a
	}
	when := p.At.UTC().Format("2006-01-02 15:04 UTC")
	same := p.Release == strings.TrimSpace(k.Release)
	found := "the fix"
	if probeMismatch(p) != nil {
		found = "the bug"
	}
	on := "kernel " + p.Release
	if same {
		on = "an earlier boot of this kernel (boot id " + shortID(p.BootID) + ")"
	}
	if same && found == "the bug" && a.status == KernelFixed {
		a.reason = fmt.Sprintf("kaudit's probe at %s found the bug on %s, and this boot was not probed: %s reads this release as fixed (%s), which a reboot into the same release does not make true; run kaudit probe to settle this boot",
			when, on, sourceName(a.source), a.reason)
		a.status, a.source = KernelUnknown, ""
		return a
	}
	by := "does not come from a probe"
	if a.source == SourceVersion || a.source == SourceChangelog {
		by = "is " + sourceName(a.source) + "'s"
	}
	a.probeNote = fmt.Sprintf("stale probe record: kaudit's probe at %s found %s on %s; this boot was not probed, so the verdict above %s (run kaudit probe to settle this boot)",
		when, found, on, by)
	return a
}

// probeMismatch is the first cookie-completed case whose two ends disagree.
func probeMismatch(p *facts.Probe) *facts.ProbeCase {
	for i, c := range p.Cases {
		if c.CookiesRecv >= 1 && c.ClientSndWscale != c.ServerRcvWscale {
			return &p.Cases[i]
		}
	}
	return nil
}

// probeUnsettled says why a probe without a mismatch does not prove the
// fix, "" when it does.
func probeUnsettled(p *facts.Probe) string {
	if p.State != facts.ProbeOK {
		if len(p.Cases) == 0 {
			return fmt.Sprintf("probe %s before it measured a handshake: %s", p.State, p.Reason)
		}
		return fmt.Sprintf("probe %s after %d handshake(s) with equal window scales (%s): %s", p.State, len(p.Cases), probePairs(p), p.Reason)
	}
	if len(p.Cases) == 0 {
		return "probe inconclusive: it finished without a single case"
	}
	for _, c := range p.Cases {
		if c.CookiesRecv < 1 {
			return fmt.Sprintf("probe inconclusive: the connection with SO_RCVBUF %d did not go through the SYN-cookie path (SyncookiesRecv did not move), so it proves nothing (%s)", c.RcvBuf, probePairs(p))
		}
	}
	for _, c := range p.Cases {
		if c.Bytes == 0 || c.Flowed < c.Bytes {
			return fmt.Sprintf("probe inconclusive: the window scales agree (%s) but the transfer with SO_RCVBUF %d stalled: %s", probePairs(p), c.RcvBuf, transferText(c))
		}
	}
	return ""
}

// sourceName names a Source* for a sentence.
func sourceName(source Source) string {
	switch source {
	case SourceVersion:
		return "the version table"
	case SourceChangelog:
		return "its package changelog"
	}
	return "the " + string(source)
}

// without is what the analysis said before the probe, for the reason.
func without(a kernelAnalysis) string {
	if a.source == "" {
		return ""
	}
	return fmt.Sprintf(" (without the probe: %s from the %s: %s)", a.status, a.source, a.reason)
}

// probePairs lists every measured case's pair and transfer.
func probePairs(p *facts.Probe) string {
	var pairs []string
	for _, c := range p.Cases {
		pairs = append(pairs, fmt.Sprintf("SO_RCVBUF %d: client %d / server %d, %s", c.RcvBuf, c.ClientSndWscale, c.ServerRcvWscale, transferText(c)))
	}
	return strings.Join(pairs, "; ")
}

// transferText is one case's transfer: what flowed, in how long, at what
// rate (bytes/s: the producer's symptom).
func transferText(c facts.ProbeCase) string {
	switch {
	case c.Bytes == 0:
		return "its transfer did not finish: the probe stopped during it"
	case c.Flowed >= c.Bytes:
		return fmt.Sprintf("%s in %s, %s", kib(c.Bytes), msText(c.MS), rate(c.Flowed, c.MS))
	}
	s := fmt.Sprintf("%s of %s in %d ms, %s", kib(c.Flowed), kib(c.Bytes), c.MS, rate(c.Flowed, c.MS))
	if c.LimitMS > 0 && c.MS >= c.LimitMS {
		s += fmt.Sprintf(", stopped at its %d ms limit", c.LimitMS)
	}
	return s
}

// against is the fastest transfer whose pair agreed, to compare a
// mismatch's throughput with.
func against(p *facts.Probe) string {
	var best *facts.ProbeCase
	for i, c := range p.Cases {
		if c.CookiesRecv >= 1 && c.ClientSndWscale == c.ServerRcvWscale && c.Bytes > 0 && c.Flowed == c.Bytes &&
			(best == nil || c.Flowed*max(best.MS, 1) > best.Flowed*max(c.MS, 1)) {
			best = &p.Cases[i]
		}
	}
	if best == nil {
		return ""
	}
	return fmt.Sprintf(", against %s with SO_RCVBUF %d whose scales agree", rate(best.Flowed, best.MS), best.RcvBuf)
}

func kib(n int) string {
	if n%1024 == 0 || n >= 10<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func msText(ms int) string {
	if ms == 0 {
		return "under 1 ms"
	}
	return fmt.Sprintf("%d ms", ms)
}

// rate is bytes per second in SI units; a transfer under 1 ms is "over"
// what 1 ms would give.
func rate(n, ms int) string {
	pre := ""
	if ms <= 0 {
		ms, pre = 1, "over "
	}
	r := float64(n) * 1000 / float64(ms)
	switch {
	case r >= 1e9:
		return fmt.Sprintf("%s%.1f GB/s", pre, r/1e9)
	case r >= 1e6:
		return fmt.Sprintf("%s%.1f MB/s", pre, r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%s%.0f KB/s", pre, r/1e3)
	}
	return fmt.Sprintf("%s%.0f B/s", pre, r)
}

// probeEvidence is what the report shows of a probe: the wscale pairs and
// transfers of every case it measured (also when it stopped part way), the
// SO_RCVBUF used, the kernel, the namespace check and the time taken.
func probeEvidence(p *facts.Probe) []string {
	if p == nil {
		return nil
	}
	var ev []string
	if p.State != facts.ProbeOK {
		ev = append(ev, fmt.Sprintf("probe: %s (%s)", p.State, p.Reason))
		if len(p.Cases) == 0 {
			return ev
		}
	}
	ev = append(ev, fmt.Sprintf("probe: kernel %s, %s, python %s, %d ms (%d ms on the host, %d bytes sent)",
		p.Release, p.Arch, p.Python, p.DurationMS, p.RemoteMS, p.ScriptBytes))
	for _, c := range p.Cases {
		line := fmt.Sprintf("probe: SO_RCVBUF %d (effective %d): client tcpi_snd_wscale %d, server tcpi_rcv_wscale %d, cookie connections %d, ",
			c.RcvBuf, c.Effective, c.ClientSndWscale, c.ServerRcvWscale, c.CookiesRecv)
		if c.Bytes == 0 {
			line += "transfer not finished (the probe stopped during it)"
		} else {
			line += fmt.Sprintf("%d/%d bytes in %d ms (%s", c.Flowed, c.Bytes, c.MS, rate(c.Flowed, c.MS))
			if c.Flowed < c.Bytes && c.LimitMS > 0 {
				line += fmt.Sprintf("; stalled, stopped at its %d ms limit", c.LimitMS)
			}
			line += ")"
		}
		ev = append(ev, line)
	}
	ns := fmt.Sprintf("probe: namespace %s -> %s", p.NetnsHost, p.NetnsProbe)
	if p.Unshare != "" {
		ns += " (" + p.Unshare + ")"
	}
	ev = append(ev, fmt.Sprintf("%s; host tcp_syncookies %s before, %s during, %s after; %s",
		ns, p.HostSyncookiesBefore, p.HostSyncookiesDuring, p.HostSyncookiesAfter, p.PerNetns))
	return ev
}

// withSource records which evidence decided a kernel finding and keeps
// the reason a requested probe did not decide beside the verdict.
func withSource(fd Finding, a kernelAnalysis) Finding {
	fd.Source = a.source
	if fd.Source == "" || a.status == KernelUnknown {
		fd.Source = SourceNone
	}
	if a.probeNote != "" {
		fd.Reason += "; " + a.probeNote
	}
	return fd
}
