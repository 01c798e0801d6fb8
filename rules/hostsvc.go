package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
)

// The rules of the host services' sections (facts/hostsvc.go): the time
// service's state, the conntrack table's drops, reverse DNS under SASL.
const (
	RuleTimeSync       = "time-sync"
	RuleConntrackDrops = "conntrack-drops"
	RuleReverseDNS     = "reverse-dns"

	PropListeners   = "listeners"
	PropProtocolMap = "listener.security.protocol.map"
)

func evalTimeSync(c *evalCtx) Finding {
	ts := c.f.TimeSync
	if ts == nil {
		return unknown(c.notGathered(facts.SecTimeSync, "the time service's state"))
	}
	by := ts.Source
	if ts.Service != "" {
		by = ts.Service + " (" + ts.Source + ")"
	}
	fd := Finding{Observed: string(ts.State) + " by " + by + ": " + ts.Detail, Expected: "a time service says the clock is synchronised"}
	switch ts.State {
	case facts.Synced:
		fd.Status, fd.Reason = Pass, by+" says the clock is synchronised"
		return fd
	case facts.Unsynced:
		fd.Reason = by + " says the clock is not synchronised: it drifts on its own, and Kafka's retention and segment rolling follow the record timestamps the broker stamps"
	default:
		fd.Observed = "no time service: " + ts.Detail + " (" + ts.Source + ")"
		fd.Reason = "no time service keeps this host's clock (timedatectl: NTP=no and not synchronised): it drifts on its own, and Kafka's retention and segment rolling follow the record timestamps the broker stamps"
	}
	fd.Status = Fail
	fd.Fix = &Fix{Summary: "synchronise the host's clock", Manual: "start a time service (chronyd, ntpd or systemd-timesyncd) against the same servers as the other brokers, and check that it reaches them: chronyc sources, ntpq -p or timedatectl timesync-status"}
	return fd
}

func evalConntrackDrops(c *evalCtx) Finding {
	st := c.f.ConntrackStat
	if st == nil {
		if s, ok := c.f.Sections[facts.SecConntrack]; ok && s.State == facts.SectionAbsent {
			return skip("nf_conntrack is not loaded: no connection tracking, nothing dropped by it")
		}
		return unknown(c.notGathered(facts.SecConntrack, "the conntrack counters (/proc/net/stat/nf_conntrack)"))
	}
	fd := Finding{Observed: fmt.Sprintf("drop=%d, early_drop=%d, insert_failed=%d (summed over %d CPUs)", st.Drop, st.EarlyDrop, st.InsertFailed, st.CPUs), Expected: "0 each"}
	if st.Drop+st.EarlyDrop+st.InsertFailed == 0 {
		fd.Status, fd.Reason = Pass, "the conntrack table has dropped no connection since nf_conntrack was loaded (this network namespace)"
		return fd
	}
	fd.Status = Fail
	fd.Reason = "the conntrack table failed to take connections (drop: table full, early_drop: an entry evicted to make room, insert_failed: a lost race or a full table): each is a new connection or packet the kernel dropped silently; the counters are cumulative since the module was loaded and per network namespace, so this may be old"
	fd.Fix = &Fix{Summary: "give the conntrack table room, or keep the Kafka ports out of it", Manual: "raise " + KeyConntrackMax + " (see conntrack-table) and persist it, or exempt the Kafka listener ports from tracking (a NOTRACK/notrack rule in the raw table); then watch the counters: conntrack -S"}
	return fd
}

// SASLListeners are the broker's listeners (NAME://HOST:PORT) whose
// security protocol is SASL_PLAINTEXT or SASL_SSL: NAME's protocol in
// listener.security.protocol.map when it is set, else NAME itself (the
// default map names each protocol for itself); both case-insensitive, as
// Kafka reads them. Unset listeners are Kafka's PLAINTEXT://:9092.
func SASLListeners(props map[string]string) []string {
	proto := map[string]string{}
	for _, kv := range strings.Split(props[PropProtocolMap], ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), ":"); ok {
			proto[strings.ToUpper(strings.TrimSpace(k))] = strings.ToUpper(strings.TrimSpace(v))
		}
	}
	var out []string
	for _, l := range strings.Split(props[PropListeners], ",") {
		name, _, ok := strings.Cut(strings.TrimSpace(l), "://")
		if !ok {
			continue
		}
		p := strings.ToUpper(name)
		if len(proto) > 0 {
			p = proto[p]
		}
		if p == "SASL_PLAINTEXT" || p == "SASL_SSL" {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// rdnsSlow is the time past which a reverse lookup is called slow.
const rdnsSlow = time.Second

func evalReverseDNS(c *evalCtx) Finding {
	k := c.f.Kafka
	if k == nil || k.PropertyLines == nil {
		return unknown(c.notGathered(facts.SecKafkaConf, "the broker's listeners (server.properties)"))
	}
	sasl := SASLListeners(k.Properties)
	if len(sasl) == 0 {
		return skip("no SASL listener: the broker's SASL handshake, which resolves addresses back to names, is not used")
	}
	r := c.f.ReverseDNS
	if r == nil {
		return unknown(c.notGathered(facts.SecRDNS, "reverse DNS of the broker's and its peers' addresses"))
	}
	if len(r.Lookups) == 0 {
		return unknown("no address to resolve back: the inventory gives neither this host's address nor its peers'")
	}
	bad, skipped := ptrProblems(r.Lookups)
	fd := Finding{Expected: "every address resolves back to a name within " + rdnsSlow.String()}
	switch {
	case len(bad) > 0:
		fd.Observed = strings.Join(bad, "; ")
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("with a SASL listener (%s) the broker and its clients resolve addresses back to names in the SASL handshake (KAFKA-8562, KAFKA-19919): a missing or slow PTR stalls each new connection for seconds, replication and produce requests with it", strings.Join(sasl, ", "))
		fd.Fix = &Fix{Summary: "make the brokers' addresses resolve back quickly", Manual: "add PTR records for the addresses named (or /etc/hosts entries on every broker and client), and check the resolver answers fast: getent hosts ADDRESS"}
	case skipped > 0:
		return unknown(fmt.Sprintf("%d of %d addresses not looked up: the gather's time for reverse DNS ran out", skipped, len(r.Lookups)))
	default:
		fd.Status = Pass
		fd.Observed = fmt.Sprintf("%d addresses resolve back within %s", len(r.Lookups), rdnsSlow)
		fd.Reason = "the broker's own address and its peers' have PTR records that answer quickly (SASL listener: " + strings.Join(sasl, ", ") + ")"
	}
	return fd
}

// ptrProblems names each lookup that failed or was slow, and counts the
// ones the script skipped.
func ptrProblems(ls []facts.PTRLookup) (bad []string, skipped int) {
	for _, l := range ls {
		who := l.Addr
		if l.Peer {
			who = "peer " + who
		}
		if l.IP != "" && l.IP != l.Addr {
			who += " (" + l.IP + ")"
		}
		took := ptrTook(l.Millis)
		switch l.Stat {
		case facts.PTRFound:
			if time.Duration(l.Millis)*time.Millisecond > rdnsSlow {
				bad = append(bad, who+" → "+l.Name+" took "+took)
			}
		case facts.PTRMissing:
			bad = append(bad, who+": no PTR record (answered in "+took+")")
		case facts.PTRTimeout:
			bad = append(bad, who+": no answer within "+took)
		case facts.PTRUnresolved:
			bad = append(bad, who+": the name does not resolve on this host")
		case facts.PTRSkipped:
			skipped++
		default:
			bad = append(bad, who+": getent failed")
		}
	}
	return bad, skipped
}

// ptrTook is a lookup's time as /proc/uptime measures it (10 ms steps).
func ptrTook(ms int64) string {
	if ms < 10 {
		return "under 10ms"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
