package rules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
)

// Rules on sysctls whose verdict needs more than a threshold.
const (
	RuleKafkaBufferCapped = "kafka-buffer-capped"
	RuleVMDirty           = "vm-dirty"
	RuleTCPTimestamps     = "tcp-timestamps"
)

// Kafka's defaults for the broker's socket buffers (KafkaConfig:
// socket.receive.buffer.bytes 100 KiB, socket.send.buffer.bytes 100 KiB)
// and the sysctl that caps each.
var kafkaBuffers = []struct {
	prop, sysctl string
	def          int
}{
	{"socket.receive.buffer.bytes", "net.core.rmem_max", 102400},
	{"socket.send.buffer.bytes", "net.core.wmem_max", 102400},
}

func evalKafkaBufferCapped(c *evalCtx) Finding {
	if c.f.Kafka == nil {
		return c.noKafkaFinding()
	}
	if !c.kafkaConfigRead() {
		return unknown(c.notGathered(facts.SecKafkaConf, "server.properties"))
	}
	var obs, capped, unk []string
	fix := &Fix{Sysctl: map[string]string{}, Bounds: map[string]Bound{}, Restart: true}
	for _, b := range kafkaBuffers {
		want, set, note, err := c.bufferProp(b.prop, b.def)
		if err != nil {
			unk = append(unk, err.Error())
			continue
		}
		limit, why, ok := c.sysctlInt(b.sysctl)
		if !ok {
			unk = append(unk, why)
			continue
		}
		switch {
		case note != "":
			obs = append(obs, fmt.Sprintf("%s, %s=%d", note, b.sysctl, limit))
		case set:
			obs = append(obs, fmt.Sprintf("%s=%d (set%s), %s=%d", b.prop, want, c.propWhere(b.prop), b.sysctl, limit))
		default:
			obs = append(obs, fmt.Sprintf("%s=%d (default), %s=%d", b.prop, want, b.sysctl, limit))
		}
		if want > limit {
			capped = append(capped, fmt.Sprintf("%s=%d is above %s=%d: the kernel silently gives the broker %d", b.prop, want, b.sysctl, limit, limit))
			fix.Sysctl[b.sysctl] = strconv.Itoa(want)
			fix.atLeast(b.sysctl)
		}
	}
	fd := Finding{Observed: strings.Join(obs, "; "), Expected: "each buffer size ≤ its sysctl maximum"}
	switch {
	case len(capped) > 0:
		fd.Status, fd.Reason = Fail, strings.Join(capped, "; ")
		fix.Summary = "raise " + strings.Join(sortedKeys(fix.Sysctl), " and ") + " to the broker's buffer sizes, then restart the broker (its listening socket kept the clamped size)"
		fd.Fix = fix
	case len(unk) > 0:
		fd.Status, fd.Reason = Unknown, strings.Join(unk, "; ")
	default:
		fd.Status, fd.Reason = Pass, "the broker's socket buffer sizes are within net.core.rmem_max and wmem_max (or -1: the kernel autotunes)"
	}
	return fd
}

// bufferProp is a socket buffer property's value as the broker uses it
// (brokerProp: the running broker's when reported, note then says so; its
// Kafka default when unset; -1, "let the kernel decide", is 0: never
// capped).
func (c *evalCtx) bufferProp(prop string, def int) (n int, set bool, note string, err error) {
	raw, set, note := c.brokerProp(prop)
	if !set {
		return def, false, "", nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(raw))
	if err != nil {
		return 0, true, note, errors.New(c.notAnInteger(prop, raw, note != ""))
	}
	return max(n, 0), true, note, nil
}

// dirtyBytes pairs each dirty ratio with the _bytes sysctl that replaces it.
var dirtyBytes = map[string]string{
	"vm.dirty_ratio":            "vm.dirty_bytes",
	"vm.dirty_background_ratio": "vm.dirty_background_bytes",
}

// evalVMDirty is the vm-dirty check, unless a _bytes counterpart is set:
// then the ratio reads 0 and means nothing (vm.rst), so the verdict is
// unknown rather than a pass of background_ratio 0 ≤ 5.
func evalVMDirty(c *evalCtx) Finding {
	var set, unk []string
	for _, ratio := range []string{"vm.dirty_background_ratio", "vm.dirty_ratio"} {
		n, why, ok := c.sysctlInt(dirtyBytes[ratio])
		switch {
		case !ok && c.f.Sysctl != nil:
			unk = append(unk, why)
		case ok && n != 0:
			set = append(set, fmt.Sprintf("%s=%d replaces %s", dirtyBytes[ratio], n, ratio))
		}
	}
	if len(set) > 0 {
		fd := unknown(strings.Join(set, "; ") + ": the limit is in bytes, which kaudit cannot compare with a share of memory; set the ratios instead (writing a ratio sets its _bytes to 0) or waive this rule")
		fd.Observed = strings.Join(set, "; ")
		return fd
	}
	fd := evalChecks(c)
	if fd.Status == Pass && len(unk) > 0 {
		return unknown("the ratios pass, but " + strings.Join(unk, "; ") + ": a _bytes value may replace them")
	}
	return fd
}

// evalTCPTimestamps is the tcp-timestamps check; on a broker with
// tcp_syncookies=0 no cookie is ever sent, so the window scale it would
// lose is not at risk: a mitigated warning, not a failure. On a client
// host the client's own cookies do not matter (its SYN's options do).
func evalTCPTimestamps(c *evalCtx) Finding {
	fd := evalChecks(c)
	if fd.Status != Fail || c.f.Role == facts.RoleClient {
		return fd
	}
	if v, _, ok := c.sysctl(KeySyncookies); ok && v == "0" {
		fd.Status, fd.Severity = Warn, c.mitigated()
		fd.Reason += "; mitigated: tcp_syncookies=0, so this host sends no SYN cookie (timestamps still serve RTT measurement and PAWS, RFC 7323)"
	} else if ok {
		fd.Reason += fmt.Sprintf("; tcp_syncookies=%s: every connection completed by a cookie loses window scaling and SACK (net/ipv4/syncookies.c, cookie_timestamp_decode)", v)
	}
	return fd
}
