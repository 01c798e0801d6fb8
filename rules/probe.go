package rules

import (
	"fmt"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// withProbe lets the SYN-cookie probe (audit/probe, FACTS.md §6) decide the
// kernel's status: it observes the kernel, so it outranks the changelog and
// the version table. A probe that did not run, or ran without proving
// anything, leaves the analysis alone and says why in probeNote.
//
// The verdict: every case whose connection went through the cookie path
// (SyncookiesRecv moved) must show the client's tcpi_snd_wscale equal to
// the accepted socket's tcpi_rcv_wscale, and the payload must have flowed;
// one unequal pair is the bug (the talk's "advertised 1, used 7").
func withProbe(a kernelAnalysis, k facts.Kernel, p *facts.Probe) kernelAnalysis {
	if p == nil {
		return a
	}
	if p.Release != "" && strings.TrimSpace(k.Release) != "" && p.Release != strings.TrimSpace(k.Release) {
		a.probeNote = fmt.Sprintf("probe ran on kernel %s, not %s: ignored", p.Release, k.Release)
		return a
	}
	if p.State != facts.ProbeOK {
		a.probeNote = "probe " + p.State + ": " + p.Reason
		return a
	}
	var pairs []string
	var mismatch *facts.ProbeCase
	proved := 0
	for i, c := range p.Cases {
		pairs = append(pairs, fmt.Sprintf("SO_RCVBUF %d: client %d / server %d", c.RcvBuf, c.ClientSndWscale, c.ServerRcvWscale))
		if c.CookiesRecv < 1 {
			continue
		}
		if c.ClientSndWscale != c.ServerRcvWscale {
			if mismatch == nil {
				mismatch = &p.Cases[i]
			}
			continue
		}
		if c.Flowed == c.Bytes {
			proved++
		}
	}
	was := ""
	if a.source != "" {
		was = fmt.Sprintf(" (without the probe: %s from the %s: %s)", a.status, a.source, a.reason)
	}
	switch {
	case mismatch != nil:
		a.status, a.source = KernelAffected, SourceProbe
		a.reason = fmt.Sprintf("probe: with tcp_syncookies=2 and SO_RCVBUF %d the client believes window scale %d while the cookie-completed socket uses %d: kernel %s lacks commit %s%s",
			mismatch.RcvBuf, mismatch.ClientSndWscale, mismatch.ServerRcvWscale, p.Release, kernels.Commit[:7], was)
	case proved > 0 && proved == len(p.Cases):
		a.status, a.source = KernelFixed, SourceProbe
		a.reason = fmt.Sprintf("probe: with tcp_syncookies=2 in a throw-away network namespace, every connection completed by a SYN cookie used the window scale the client was told (%s) and %d KiB flowed: kernel %s handles cookie connections correctly%s",
			strings.Join(pairs, ", "), p.Cases[0].Bytes>>10, p.Release, was)
	default:
		a.probeNote = fmt.Sprintf("probe inconclusive: %d of %d connections went through the SYN-cookie path with their payload delivered (%s)", proved, len(p.Cases), strings.Join(pairs, ", "))
	}
	return a
}

// probeEvidence is what the report shows of a probe: the wscale pairs, the
// SO_RCVBUF used, the kernel, the namespace check and the time taken.
func probeEvidence(p *facts.Probe) []string {
	if p == nil {
		return nil
	}
	if p.State != facts.ProbeOK {
		return []string{fmt.Sprintf("probe: %s (%s)", p.State, p.Reason)}
	}
	ev := []string{fmt.Sprintf("probe: kernel %s, %s, python %s, %d ms (%d ms on the host, %d bytes sent)",
		p.Release, p.Arch, p.Python, p.DurationMS, p.RemoteMS, p.ScriptBytes)}
	for _, c := range p.Cases {
		ev = append(ev, fmt.Sprintf("probe: SO_RCVBUF %d (effective %d): client tcpi_snd_wscale %d, server tcpi_rcv_wscale %d, cookie connections %d, %d/%d bytes in %d ms",
			c.RcvBuf, c.Effective, c.ClientSndWscale, c.ServerRcvWscale, c.CookiesRecv, c.Flowed, c.Bytes, c.MS))
	}
	ev = append(ev, fmt.Sprintf("probe: namespace %s -> %s; host tcp_syncookies %s before, %s during, %s after; %s",
		p.NetnsHost, p.NetnsProbe, p.HostSyncookiesBefore, p.HostSyncookiesDuring, p.HostSyncookiesAfter, p.PerNetns))
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
