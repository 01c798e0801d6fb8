package parse

import (
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// The timesync section is a sequence of blocks, each opened by an "@"
// line naming what was asked and how it exited:
//
//	@chronyc RC         chronyc -n tracking's output follows
//	@ntpq RC            ntpq -n -c rv's output follows
//	@timesyncd synchronized   /run/systemd/timesync/synchronized exists
//	@timedatectl RC     timedatectl show -p NTP -p NTPSynchronized's output follows
//
// RC 124 is timeout(1)'s: the tool did not answer within the bound.

// TimeSync reads the timesync section: the first block whose service
// answered decides. nil and why when none did (no such tool, the daemon
// not running, an answer kaudit cannot read).
func TimeSync(body string) (*facts.TimeSync, string) {
	var whys []string
	for _, b := range syncBlocks(body) {
		ts, why := b.decide()
		if ts != nil {
			return ts, ""
		}
		if why != "" {
			whys = append(whys, why)
		}
	}
	if len(whys) == 0 {
		return nil, "no chronyc, ntpq, timesyncd state or timedatectl on the host"
	}
	return nil, strings.Join(whys, "; ")
}

type syncBlock struct {
	tool, arg string
	lines     []string
}

func syncBlocks(body string) []syncBlock {
	var out []syncBlock
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimRight(l, "\r")
		if tag, ok := strings.CutPrefix(l, "@"); ok {
			tool, arg, _ := strings.Cut(tag, " ")
			out = append(out, syncBlock{tool: tool, arg: arg})
			continue
		}
		if len(out) > 0 && strings.TrimSpace(l) != "" {
			out[len(out)-1].lines = append(out[len(out)-1].lines, l)
		}
	}
	return out
}

// decide is one block's answer, or why it gave none.
func (b syncBlock) decide() (*facts.TimeSync, string) {
	if b.tool == "timesyncd" {
		if b.arg == "synchronized" {
			return &facts.TimeSync{State: facts.Synced, Service: "systemd-timesyncd", Source: "/run/systemd/timesync/synchronized", Detail: "the file exists"}, ""
		}
		return nil, ""
	}
	rc, err := strconv.Atoi(b.arg)
	if err != nil {
		return nil, b.tool + ": exit status " + strconv.Quote(b.arg) + " not a number"
	}
	if rc == 124 {
		return nil, b.tool + " did not answer within the gather's bound"
	}
	switch b.tool {
	case "chronyc":
		return chronyTracking(b.lines, rc)
	case "ntpq":
		return ntpqVars(b.lines, rc)
	case "timedatectl":
		return timedatectlShow(b.lines, rc)
	}
	return nil, ""
}

// chronyTracking reads chronyc -n tracking: its "Leap status" line
// (Normal, Insert second, Delete second: synchronised; Not synchronised).
func chronyTracking(lines []string, rc int) (*facts.TimeSync, string) {
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(k) != "Leap status" {
			continue
		}
		v = strings.TrimSpace(v)
		ts := &facts.TimeSync{Service: "chronyd", Source: "chronyc -n tracking", Detail: "Leap status: " + v}
		switch v {
		case "Normal", "Insert second", "Delete second":
			ts.State = facts.Synced
		case "Not synchronised", "Not synchronized":
			ts.State = facts.Unsynced
		default:
			return nil, "chronyc: leap status " + strconv.Quote(v) + " not understood"
		}
		return ts, ""
	}
	return nil, "chronyc (exit " + strconv.Itoa(rc) + "): " + firstOr(lines, "no leap status")
}

// ntpqVars reads ntpq -n -c rv: leap=11 (or 3), or a stratum of 16, is
// unsynchronised; leap 00, 01, 10 with a lower stratum is synchronised.
// Without a leap variable, the status word (leap_alarm) decides.
func ntpqVars(lines []string, rc int) (*facts.TimeSync, string) {
	vars := map[string]string{}
	status := ""
	for _, l := range lines {
		for _, kv := range strings.Split(l, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				continue
			}
			if k == "associd" { // "associd=0 status=c016 leap_alarm"
				status = v
				continue
			}
			vars[k] = strings.Trim(v, `"`)
		}
	}
	leap, hasLeap := vars["leap"]
	if !hasLeap && status == "" {
		return nil, "ntpq (exit " + strconv.Itoa(rc) + "): " + firstOr(lines, "no system variables")
	}
	ts := &facts.TimeSync{Service: "ntpd", Source: "ntpq -n -c rv", State: facts.Synced}
	strat, err := strconv.Atoi(vars["stratum"])
	switch {
	case hasLeap:
		ts.Detail = "leap=" + leap + ", stratum=" + vars["stratum"]
		if leap == "11" || leap == "3" || leap == "03" || (err == nil && strat >= 16) {
			ts.State = facts.Unsynced
		} else if leap != "00" && leap != "01" && leap != "10" && leap != "0" && leap != "1" && leap != "2" {
			return nil, "ntpq: leap=" + strconv.Quote(leap) + " not understood"
		}
	default:
		ts.Detail = "status " + status
		if strings.Contains(status, "leap_alarm") || strings.Contains(status, "sync_unspec") {
			ts.State = facts.Unsynced
		}
	}
	return ts, ""
}

// timedatectlShow reads timedatectl show -p NTP -p NTPSynchronized: the
// kernel's own synchronisation flag, which timedated reads; NTP says
// whether a time service unit is on.
func timedatectlShow(lines []string, rc int) (*facts.TimeSync, string) {
	kv := map[string]string{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	synced, ntp := kv["NTPSynchronized"], kv["NTP"]
	ts := &facts.TimeSync{Source: "timedatectl show", Detail: "NTP=" + ntp + " NTPSynchronized=" + synced}
	switch {
	case synced == "yes":
		ts.State = facts.Synced
	case synced == "no" && ntp == "yes":
		ts.State = facts.Unsynced
	case synced == "no" && ntp == "no":
		ts.State = facts.NoService
	default:
		return nil, "timedatectl (exit " + strconv.Itoa(rc) + "): " + firstOr(lines, "no NTPSynchronized")
	}
	return ts, ""
}

func firstOr(lines []string, none string) string {
	if len(lines) == 0 {
		return none
	}
	return strings.TrimSpace(lines[0])
}
