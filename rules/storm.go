package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/words"
)

// stormListener is one Kafka listener and the clients connected through it.
type stormListener struct {
	l        facts.Listener
	label    string // ":9092", or "10.0.0.1:9092" when the port has several listeners
	clients  int
	capacity int    // connection attempts the queues hold without cookies or drops
	bound    string // how capacity was bounded
}

// stormListeners are the Kafka listeners with the established connections
// counted on each: a local address:port goes to the listener bound to
// that address, else to the port's wildcard listener (an IPv4 address
// first to an IPv4 wildcard, any other to the IPv6 one).
func (c *evalCtx) stormListeners() []stormListener {
	ports := KafkaPorts(c.f)
	var out []stormListener
	perPort := map[int]int{}
	for _, first := range []bool{true, false} { // the inventory's port first: it wins ties
		for _, l := range c.f.Listeners {
			if slices.Contains(ports, l.Port) && (l.Port == c.kafkaPort()) == first {
				out = append(out, stormListener{l: l})
				perPort[l.Port]++
			}
		}
	}
	for i := range out {
		out[i].label = fmt.Sprintf(":%d", out[i].l.Port)
		if perPort[out[i].l.Port] > 1 {
			out[i].label = fmt.Sprintf("%s:%d", out[i].l.Addr, out[i].l.Port)
		}
	}
	for _, e := range c.f.Established {
		if i := listenerFor(out, e); i >= 0 {
			out[i].clients += e.Count
		}
	}
	return out
}

func listenerFor(ls []stormListener, e facts.LocalConns) int {
	ea, eok := hostAddr(e.Addr)
	wild := -1
	for i, s := range ls {
		if s.l.Port != e.Port {
			continue
		}
		if la, ok := hostAddr(s.l.Addr); ok && eok && !la.IsUnspecified() && la == ea {
			return i
		}
		if isWildcard(s.l.Addr) {
			la, ok := hostAddr(s.l.Addr)
			v4 := ok && la.Is4()
			if wild < 0 || (eok && ea.Is4() == v4) {
				wild = i
			}
		}
	}
	return wild
}

// stormBound sets each listener's capacity: its Send-Q (the effective
// backlog, min(backlog, somaxconn)), and with tcp_syncookies=0 at most
// three quarters of tcp_max_syn_backlog (net/ipv4/tcp_input.c tcp_conn_request). cookies is the
// tcp_syncookies value (1 when unreadable).
func (c *evalCtx) stormBound(ls []stormListener, cookies int) {
	synb, _, synOK := c.sysctlInt(KeySynBacklog)
	for i := range ls {
		s := &ls[i]
		s.capacity = max(s.l.Backlog, 1)
		s.bound = fmt.Sprintf("an effective backlog of %s", words.Thousands(s.l.Backlog))
		if cookies == 0 && synOK && synb-synb/4 < s.capacity {
			s.capacity = max(synb-synb/4, 1)
			s.bound = fmt.Sprintf("%s SYN-queue slots for new peers (¾ of tcp_max_syn_backlog %d, cookies off)", words.Thousands(s.capacity), synb)
		}
	}
}

func evalReconnectStorm(c *evalCtx) Finding {
	if c.f.Listeners == nil {
		return unknown(c.notGathered(facts.SecListeners, "listeners"))
	}
	ls := c.stormListeners()
	if len(ls) == 0 {
		return skip(fmt.Sprintf("no Kafka listener found (ports %s): no client would reconnect here", joinInts(KafkaPorts(c.f))))
	}
	if c.f.Established == nil {
		return unknown(c.notGathered(facts.SecEstablished, "established connections"))
	}
	cookies, why, ok := c.sysctlInt(KeySyncookies)
	note := ""
	if !ok {
		cookies, note = 1, "; "+why+": assumed 1, the default"
	}
	c.stormBound(ls, cookies)
	worst := ls[0]
	var ev []string
	for _, s := range ls {
		ev = append(ev, fmt.Sprintf("%s clients on %s vs %s (Send-Q %d)", words.Thousands(s.clients), s.label, s.bound, s.l.Backlog))
		if s.clients*worst.capacity > worst.clients*s.capacity {
			worst = s
		}
	}
	ev = append(ev, c.stormSysctls()...)
	fd := Finding{Evidence: ev, Expected: fmt.Sprintf("clients ≤ the effective backlog (a warning up to %d%% above it)", c.p.StormMargin)}
	fd.Observed = fmt.Sprintf("%s clients on %s vs %s", words.Thousands(worst.clients), worst.label, worst.bound)
	return c.stormVerdict(fd, worst, cookies, note)
}

func (c *evalCtx) stormVerdict(fd Finding, w stormListener, cookies int, note string) Finding {
	if cookies == 2 { // whoever happens to be connected now: every client that connects gets a cookie
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("tcp_syncookies=2: every SYN is answered with a cookie, so every client that connects on %s (%s connected now, all of them again after a restart or leader election) gets a cookie connection (the path of the wscale bug, see kernel-synack-wscale)", w.label, words.Thousands(w.clients))
		fd.Fix = &Fix{Summary: "set net.ipv4.tcp_syncookies=1 (cookies only on overflow)", Sysctl: map[string]string{KeySyncookies: "1"}}
		return fd
	}
	over := "get SYN cookies (tcp_syncookies=1); on a kernel without commit 909172a each may run with a mismatched window scale (kernel-synack-wscale)"
	if cookies == 0 {
		over = "are dropped (tcp_syncookies=0) and retried by the clients after a SYN timeout: connect delay"
	}
	if w.clients <= w.capacity {
		fd.Status = Pass
		fd.Reason = fmt.Sprintf("a restart or leader election makes at most %s clients reconnect on %s, which fit in %s%s", words.Thousands(w.clients), w.label, w.bound, note)
		return fd
	}
	fd.Observed += fmt.Sprintf(": a restart sends ~%s the SYNs the queue holds", times(w.clients, w.capacity))
	fd.Reason = fmt.Sprintf("restart → leader election → reconnect storm: the %s clients on %s reconnect at once and the SYNs beyond %s %s%s", words.Thousands(w.clients), w.label, w.bound, over, note)
	need := (w.clients*(100+c.p.StormMargin) + 99) / 100
	_, fd.Fix = c.backlogLimits(fd.Observed, max(need, c.p.ListenBacklog))
	fd.Fix.Summary = fmt.Sprintf("raise the effective listen backlog above %s clients: %s", words.Thousands(w.clients), fd.Fix.Summary)
	if w.clients*100 <= w.capacity*(100+c.p.StormMargin) {
		fd.Status, fd.Severity = Warn, c.warning()
		fd.Reason += fmt.Sprintf(" — only by up to %d%% (storm_margin): the queue drains while handshakes complete, so it may hold", c.p.StormMargin)
		return fd
	}
	fd.Status = Fail
	return fd
}

func (c *evalCtx) stormSysctls() []string {
	var out []string
	for _, k := range []string{KeySomaxconn, KeySynBacklog, KeySyncookies} {
		if v, _, ok := c.sysctl(k); ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// times is n/d as "37×" (one decimal below 10: "1.2×").
func times(n, d int) string {
	r := float64(n) / float64(d)
	if r < 10 {
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.0f×", r)
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}
