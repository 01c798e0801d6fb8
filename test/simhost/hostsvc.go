package simhost

import (
	"strings"
)

// The host services' sections as the gather script prints them
// (timesync, conntrack-stat, rdns), for a broker host.

// DefaultTimeSync is chronyd synchronised (chronyc -n tracking).
const DefaultTimeSync = "@chronyc 0\nReference ID    : 0A000001 (10.0.0.1)\nStratum         : 3\nLeap status     : Normal\n"

// NTPUnsynced is ntpd with no usable server (ntpq -n -c rv after a restart).
const NTPUnsynced = "@ntpq 0\nassocid=0 status=c016 leap_alarm, sync_unspec, 1 event, restart,\nleap=11, stratum=16, precision=-23, rootdelay=0.000, rootdisp=0.915, refid=INIT,\n"

const conntrackHead = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n"

// ConntrackStat is /proc/net/stat/nf_conntrack for two CPUs, with the
// given early_drop on the first.
func ConntrackStat(earlyDrop string) string {
	zero := "00000000"
	line := func(ed string) string {
		f := []string{"0000145a ", zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, ed, zero + " ", zero, zero, zero, zero}
		return strings.Join(f, " ") + "\n"
	}
	return conntrackHead + line(earlyDrop) + line(zero)
}

// hostSvcSections are the three sections of h: its TimeSync (default
// DefaultTimeSync), Conntrack (default no drops), and, when its
// server.properties names a SASL protocol, RDNS.
func (h *Host) hostSvcSections() []section {
	ts := h.TimeSync
	if ts == "" {
		ts = DefaultTimeSync
	}
	ct := h.Conntrack
	if ct == "" {
		ct = ConntrackStat("00000000")
	}
	rd := section{"rdns", "absent", "no SASL listener named in the broker's configuration\n"}
	if h.Kafka != nil && strings.Contains(strings.ToUpper(h.Kafka.ConfigBody), "SASL_") {
		rd = section{"rdns", "ok", h.RDNS}
	}
	return []section{{"timesync", "ok", ts}, {"conntrack-stat", "ok", ct}, rd}
}
