package rules

import (
	"fmt"
	"strings"
)

// exposure says whether the preconditions of Linux commit 909172a's bug hold:
// tcp_syncookies is not 0 and the listener sets SO_RCVBUF.
type exposure struct {
	cookies     bool   // SYN cookies can fire (tcp_syncookies != 0)
	cookiesNote string // what was seen
	rcvbuf      bool   // the Kafka listener sets SO_RCVBUF
	rcvbufNote  string
}

func (c *evalCtx) exposure() exposure {
	var e exposure
	switch v, _, ok := c.sysctl(KeySyncookies); {
	case !ok:
		e.cookies, e.cookiesNote = true, "tcp_syncookies not read, assuming cookies can fire (the kernel default is 1)"
	case v == "0":
		e.cookies, e.cookiesNote = false, "tcp_syncookies=0"
	case v == "2":
		e.cookies, e.cookiesNote = true, "tcp_syncookies=2 (cookies for every SYN)"
	default:
		e.cookies, e.cookiesNote = true, "tcp_syncookies="+v
	}
	k := c.f.Kafka
	switch {
	case k == nil:
		e.rcvbuf, e.rcvbufNote = true, "no Kafka broker found, assuming the listener sets SO_RCVBUF as Kafka does by default"
	case !c.kafkaConfigRead():
		e.rcvbuf, e.rcvbufNote = true, c.notGathered("kafka-config", "server.properties")+", assuming socket.receive.buffer.bytes is the default 102400 (SO_RCVBUF set)"
	default:
		v, set, note := c.brokerProp(PropRcvbuf)
		v = strings.TrimSpace(v)
		switch {
		case !set:
			e.rcvbuf, e.rcvbufNote = true, "socket.receive.buffer.bytes unset (Kafka default 102400 sets SO_RCVBUF)"
		case v == "-1":
			e.rcvbuf, e.rcvbufNote = false, "socket.receive.buffer.bytes=-1 (SO_RCVBUF not set)"
		default:
			e.rcvbuf, e.rcvbufNote = true, "socket.receive.buffer.bytes="+shown(v)+" (sets SO_RCVBUF)"
		}
		if note != "" {
			e.rcvbufNote += ": " + note
		}
	}
	return e
}

func evalKernelSynackWscale(c *evalCtx) Finding {
	a := c.kernel()
	e := c.exposure()
	exposed := e.cookies && e.rcvbuf

	kdesc := "kernel " + a.release
	if a.release == "" {
		kdesc = "kernel unknown"
	}
	if a.upstream != "" {
		kdesc += " (upstream " + a.upstream + ")"
	}
	fd := Finding{
		Observed: fmt.Sprintf("%s: %s; %s; %s", kdesc, a.status, e.cookiesNote, e.rcvbufNote),
		Expected: "kernel with commit 909172a (" + a.fixedRange() + "), or tcp_syncookies=0, or socket.receive.buffer.bytes=-1 [D]",
	}
	for _, ev := range []string{c.f.Kernel.Release, c.f.Kernel.Signature, c.f.Kernel.Version} {
		if ev = strings.TrimSpace(ev); ev != "" {
			fd.Evidence = append(fd.Evidence, ev)
		}
	}
	fd.Evidence = append(fd.Evidence, probeEvidence(c.f.Probe)...)
	if a.status == KernelFixed {
		fd.Status = Pass
		fd.Reason = a.reason
		return withSource(fd, a)
	}

	fd.Fix = kernelFix(a, exposed)
	c.kernelVerdict(&fd, a, e)
	return withSource(fd, a)
}

// kernelFix is kernel-synack-wscale's fix: the kernel upgrade, with
// tcp_syncookies=0 when the host is exposed, and the alternatives.
func kernelFix(a kernelAnalysis, exposed bool) *Fix {
	fix := &Fix{
		Summary: "upgrade the kernel to one with commit 909172a",
		Manual:  "upgrade the kernel to " + a.upgradeTarget(),
		Alternatives: []Alternative{{
			Text:   "net.ipv4.tcp_syncookies=0 together with a raised listen backlog (somaxconn and socket.listen.backlog.size): the talk's choice; trade-off: during a real SYN flood SYNs are dropped instead of answered with cookies, and clients retry with a connect delay",
			Sysctl: map[string]string{KeySyncookies: "0"},
		}, {
			Text:            "socket.receive.buffer.bytes=-1 (broker restart): the listener no longer sets SO_RCVBUF, removing the clamp the cookie path forgets; derived from the commit [D], not stated by the talk; the kernel then autotunes the receive buffer",
			KafkaProperties: map[string]string{PropRcvbuf: "-1"},
			Restart:         true,
			Offer:           true,
		}},
		WhenUnknown: true,
	}
	if exposed {
		fix.Sysctl = map[string]string{KeySyncookies: "0"}
	}
	return fix
}

// kernelVerdict sets the status, severity and reason of a kernel that is
// not known to be fixed: fail when exposed, else warn (affected) or
// unknown, never pass.
func (c *evalCtx) kernelVerdict(fd *Finding, a kernelAnalysis, e exposure) {
	exposed := e.cookies && e.rcvbuf
	var mitigation string
	switch {
	case !e.cookies:
		mitigation = "tcp_syncookies=0: cookies never fire; SYNs are dropped instead when the queue is full"
	case !e.rcvbuf:
		mitigation = "socket.receive.buffer.bytes=-1: the listener does not set SO_RCVBUF, so the cookie path has no clamp to forget [D]"
	}

	switch a.status {
	case KernelAffected:
		if exposed {
			fd.Status = Fail
			fd.Reason = a.reason + "; " + e.cookiesNote + " and " + e.rcvbufNote + ": a connection completed by a SYN cookie gets a window scale different from the one advertised (the talk's 1 vs 7), and producers to this broker slow to a crawl"
		} else {
			fd.Status, fd.Severity = Warn, c.mitigated()
			fd.Reason = "kernel lacks 909172a but " + mitigation + " (" + a.reason + ")"
		}
	default: // unknown: never pass
		fd.Status = Unknown
		if exposed {
			fd.Reason = "cannot tell whether the kernel has commit 909172a: " + a.reason + "; the host is exposed if it lacks it (" + e.cookiesNote + ", " + e.rcvbufNote + ")"
		} else {
			fd.Severity = c.mitigated()
			fd.Reason = "cannot tell whether the kernel has commit 909172a, but " + mitigation + ". Why unknown: " + a.reason
		}
	}
}

func evalSyncookiesFired(c *evalCtx) Finding {
	names := []string{"SyncookiesSent", "TCPReqQFullDoCookies"}
	var floods []string
	for _, l := range c.f.Evidence.SynFlood {
		if !strings.Contains(l, "Dropping request") {
			floods = append(floods, l)
		}
	}
	got, _ := c.counters(names...)
	if len(got) == 0 && len(floods) == 0 {
		if c.f.Netstat == nil || c.f.Netstat["TcpExt"] == nil {
			return unknown(c.notGathered("netstat", "TcpExt counters (/proc/net/netstat)"))
		}
		return unknown("TcpExt has neither SyncookiesSent nor TCPReqQFullDoCookies")
	}
	fired := len(floods) > 0
	for _, v := range got {
		fired = fired || v > 0
	}
	fd := Finding{
		Observed: fmtCounters(names, got),
		Expected: "0 (no SYN cookies sent)",
		Evidence: floods,
	}
	if len(floods) > 0 {
		fd.Observed = strings.TrimSpace(fd.Observed + fmt.Sprintf(" %d SYN-flood log line(s)", len(floods)))
	}
	note := "counters are cumulative since boot and per network namespace"
	if !fired {
		fd.Status = Pass
		fd.Reason = "no SYN cookies sent since boot in this network namespace (" + note + ")"
		return fd
	}
	fd.Status = Fail
	fd.Reason = "the SYN queue overflowed and SYN cookies were sent: the listen backlog is too small for reconnect storms (restarts, leader elections); " + note + ", so this may be old"
	switch a := c.kernel(); a.status {
	case KernelAffected:
		fd.Severity = c.raised()
		fd.Reason += "; raised to critical: the kernel lacks commit 909172a, so these cookie connections may run with a mismatched window scale (" + a.reason + ")"
	case KernelUnknown:
		fd.Reason += "; not raised to critical because the kernel's status is unknown (see kernel-synack-wscale): if it lacks commit 909172a these connections may run with a mismatched window scale"
	}
	fd.Fix = c.backlogFix("raise the listen backlog so restarts do not overflow the SYN queue")
	return fd
}

func evalListenOverflows(c *evalCtx) Finding {
	names := []string{"ListenOverflows", "ListenDrops", "TCPReqQFullDrop"}
	got, _ := c.counters(names...)
	var drops []string
	for _, l := range c.f.Evidence.SynFlood {
		if strings.Contains(l, "Dropping request") {
			drops = append(drops, l)
		}
	}
	if len(got) == 0 {
		if c.f.Netstat == nil || c.f.Netstat["TcpExt"] == nil {
			return unknown(c.notGathered("netstat", "TcpExt counters (/proc/net/netstat)"))
		}
		return unknown("TcpExt has none of ListenOverflows, ListenDrops, TCPReqQFullDrop")
	}
	fd := Finding{Observed: fmtCounters(names, got), Expected: "0", Evidence: drops}
	var nonzero []string
	for _, n := range names {
		if got[n] > 0 {
			nonzero = append(nonzero, n)
		}
	}
	if len(nonzero) == 0 {
		fd.Status = Pass
		fd.Reason = "no listen-queue overflows or drops since boot in this network namespace"
		return fd
	}
	fd.Status = Fail
	fd.Reason = strings.Join(nonzero, ", ") + " > 0: listeners dropped connection attempts (accept or SYN queue full); each drop costs the client a retransmission timeout; counters are cumulative since boot and per network namespace, so this may be old"
	fd.Fix = c.backlogFix("raise the listen backlog (somaxconn and the Kafka backlog)")
	return fd
}

// backlogFix proposes the backlog changes that apply on this host.
func (c *evalCtx) backlogFix(summary string) *Fix {
	fix := &Fix{Summary: summary}
	if n, _, ok := c.sysctlInt(KeySomaxconn); ok && n < c.p.Somaxconn {
		fix.Sysctl = map[string]string{KeySomaxconn: fmt.Sprint(c.p.Somaxconn)}
		fix.atLeast(KeySomaxconn)
		fix.Restart = true
	}
	kv := c.kafkaVersion()
	switch {
	case c.f.Kafka == nil || kv.configurable == AnswerUnknown:
	case kv.configurable == AnswerNo:
		fix.Manual = "upgrade Kafka to ≥ 3.2 so socket.listen.backlog.size can be raised (KIP-764)"
	default:
		if n, ok := c.kafkaBacklogProp(); ok && n < c.p.ListenBacklog {
			fix.KafkaProperties = map[string]string{PropBacklog: fmt.Sprint(c.p.ListenBacklog)}
			fix.atLeast(PropBacklog)
			fix.Restart = true
		}
	}
	if fix.Sysctl == nil && fix.KafkaProperties == nil && fix.Manual == "" {
		fix.Manual = "check the Kafka listener's Send-Q (see listen-backlog-effective) and the broker's accept rate"
	}
	return fix
}
