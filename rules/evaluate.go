package rules

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/redact"
)

// evaluator is one rule's check: a pure function of the facts and profile.
type evaluator func(c *evalCtx) Finding

// evaluators maps every catalog ID without a check to its Go evaluator
// (TestCatalogEvaluators keeps the two in step); a rule with a catalog
// check is judged by evalChecks, unless it is listed here because its
// verdict needs reasoning beyond the thresholds.
var evaluators = map[string]evaluator{
	RuleKernelSynackWscale:     evalKernelSynackWscale,
	RuleSyncookiesFired:        evalSyncookiesFired,
	RuleListenOverflows:        evalListenOverflows,
	RuleKafkaBacklogHardcoded:  evalKafkaBacklogHardcoded,
	RuleKafkaBacklogConfig:     evalKafkaBacklogConfig,
	RuleListenBacklogEffective: evalListenBacklogEffective,
	RuleReconnectStorm:         evalReconnectStorm,
	"syn-backlog":              evalSynBacklog,
	"congestion-control":       evalCongestionControl,
	RuleSysctlPersisted:        evalSysctlPersisted,
	"nic-ring":                 evalNICRing,
	"nic-offload":              evalNICOffload,
	RuleNICPersisted:           evalNICPersisted,
	RuleBrokerOpenFiles:        evalBrokerOpenFiles,
	RuleBrokerMapCount:         evalBrokerMapCount,
	RuleBrokerSwap:             evalBrokerSwap,
	RuleJVMVersion:             evalJVMVersion,
	RuleJVMHeap:                evalJVMHeap,
	RuleLogDirFilesystem:       evalLogDirFilesystem,
	RuleLogDirNoatime:          evalLogDirNoatime,
	RuleLogDirRootDevice:       evalLogDirRootDevice,
	RuleKafkaBufferCapped:      evalKafkaBufferCapped,
	RuleVMDirty:                evalVMDirty,
	RuleTCPTimestamps:          evalTCPTimestamps,
	"numa-zone-reclaim":        evalZoneReclaim,
	"transparent-hugepages":    evalTHP,
	"clocksource":              evalClocksource,
	"conntrack-table":          evalConntrack,
	"clock-offset":             evalClockOffset,
	RuleTimeSync:               evalTimeSync,
	RuleConntrackDrops:         evalConntrackDrops,
	RuleReverseDNS:             evalReverseDNS,
	"broker-cgroup-memory":     evalCgroupMemory,
	"log-dir-devices":          evalLogDevices,
}

// Evaluate runs every catalog rule against one host's facts and returns
// exactly one finding per rule, in catalog order. A rule that panics yields
// an "error" finding instead of taking the others down. Nil facts yield
// "unknown" for every rule. On a client host (Facts.Role client) the rules
// not marked clients are skip. A fleet rule (scope fleet) is unknown here
// until EvaluateFleet has seen every host (ApplyFleet puts its verdict in).
func Evaluate(f *facts.Facts, p Profile) []Finding { return shipped.Evaluate(f, p) }

// evaluatorFor is the rule's Go evaluator, else evalChecks for a rule with
// a check, else nil.
func evaluatorFor(r Rule) evaluator {
	if fn := evaluators[r.ID]; fn != nil {
		return fn
	}
	if r.Check != nil {
		return evalChecks
	}
	return nil
}

// Evaluate runs the set's rules as the package's Evaluate runs the shipped ones.
func (s *Set) Evaluate(f *facts.Facts, p Profile) []Finding {
	out := make([]Finding, 0, len(s.rules))
	for _, r := range s.rules {
		if r.Scope == ScopeCluster {
			continue // judged on the cluster, never on a host (report.Cluster)
		}
		var fd Finding
		switch fn := evaluatorFor(r); {
		case f == nil:
			fd = Finding{Status: Unknown, Reason: "no facts gathered for this host"}
		case r.Scope == ScopeFleet:
			fd = unknown("judged over the whole fleet, after every host is gathered (not evaluated: no fleet pass ran)")
		case f.Role == facts.RoleClient && !r.Clients:
			fd = skip(clientHostReason)
		case fn == nil:
			fd = Finding{Status: Error, Reason: "no evaluator for rule " + r.ID + " (kaudit bug)"}
		default:
			fd = safeEval(fn, &evalCtx{f: f, p: p, rule: r, set: s})
			onTheNode(&fd, f)
		}
		fd.Rule = r.ID
		fd.Title = cmp.Or(fd.Title, r.Title)
		fd.Severity = cmp.Or(fd.Severity, r.Severity)
		out = append(out, fd)
	}
	return out
}

func safeEval(fn evaluator, c *evalCtx) (fd Finding) {
	defer func() {
		if v := recover(); v != nil {
			fd = Finding{Status: Error, Reason: fmt.Sprintf("rule %s could not be evaluated (kaudit bug): %v", c.rule.ID, v)}
		}
	}()
	return fn(c)
}

// evalCtx carries one host's facts and profile through one rule.
type evalCtx struct {
	f    *facts.Facts
	p    Profile
	rule Rule
	set  *Set
	k    *kernelAnalysis
}

// Where a rule's verdict on one host departs from its catalog severity:
// each departure is named here once, relative to the catalog's. Every
// other finding carries the catalog's severity (Evaluate fills it in);
// TestFailingSeverities holds the evaluators to that.

// raised: the risk is worse on this host (syncookies-fired on a kernel
// without 909172a: one step above the catalog's).
func (c *evalCtx) raised() Severity { return c.rule.Severity.step(+1) }

// warning: a warn, short of a failure (reconnect-storm within its
// storm_margin, sysctl-persisted with an unknown boot value): one step below.
func (c *evalCtx) warning() Severity { return c.rule.Severity.step(-1) }

// mitigated: the host lacks a fix but a precondition of the risk is off
// (kernel-synack-wscale with cookies off or no SO_RCVBUF): two steps
// below the catalog's, and never above low.
func (c *evalCtx) mitigated() Severity {
	s := c.rule.Severity.step(-2)
	if s.Rank() > Low.Rank() {
		s = Low
	}
	return s
}

func (c *evalCtx) kernel() kernelAnalysis {
	if c.k == nil {
		a := analyzeKernel(c.f.Kernel)
		if a.release == "" {
			a.reason = c.notGathered(facts.SecKernel, "kernel release")
		}
		a = withProbe(a, c.f.Kernel, c.f.Probe)
		if c.f.Probe == nil {
			a = withEarlierProbe(a, c.f.Kernel, c.f.EarlierProbe)
		}
		c.k = &a
	}
	return *c.k
}

// notGathered explains why a section is missing, using the gatherer's
// recorded state and message when there is one.
func (c *evalCtx) notGathered(sec, what string) string {
	if st, ok := c.f.Sections[sec]; ok {
		msg := strings.TrimSpace(st.Message)
		switch {
		case msg != "":
			return what + " not gathered: " + msg
		case st.State != "":
			return what + " not gathered (" + string(st.State) + ")"
		}
	}
	return what + " not gathered"
}

// sysctl returns a runtime sysctl value, or why it is missing.
func (c *evalCtx) sysctl(key string) (string, string, bool) {
	if c.f.Sysctl == nil {
		return "", c.notGathered(facts.SecSysctl, "sysctl values"), false
	}
	v, ok := c.f.Sysctl[key]
	if !ok {
		why := key + " not readable on the host"
		if st, ok := c.f.Sections[facts.SecSysctl]; ok && st.Message != "" {
			why += ": " + st.Message
		}
		return "", why, false
	}
	return strings.Join(strings.Fields(v), " "), "", true
}

// sysctlInt returns an integer sysctl, or why it cannot.
func (c *evalCtx) sysctlInt(key string) (int, string, bool) {
	v, why, ok := c.sysctl(key)
	if !ok {
		return 0, why, false
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Sprintf("%s=%s is not an integer", key, redact.Excerpt(v)), false
	}
	return n, "", true
}

func (c *evalCtx) kafkaPort() int {
	if c.f.KafkaPort > 0 {
		return c.f.KafkaPort
	}
	return 9092
}

func (c *evalCtx) noKafka() string {
	msg := "no Kafka broker found on host"
	if st, ok := c.f.Sections[facts.SecKafka]; ok && strings.TrimSpace(st.Message) != "" {
		return msg + ": " + strings.TrimSpace(st.Message)
	}
	return fmt.Sprintf("%s: no listener on port %d with a Kafka process and no kafka.Kafka command line", msg, c.kafkaPort())
}

func unknown(reason string) Finding { return Finding{Status: Unknown, Reason: reason} }
func skip(reason string) Finding    { return Finding{Status: Skip, Reason: reason} }

// counters returns the TcpExt counters present among names, and the missing names.
func (c *evalCtx) counters(names ...string) (map[string]int64, []string) {
	got := map[string]int64{}
	var missing []string
	tcpExt := c.f.Netstat["TcpExt"]
	for _, n := range names {
		if v, ok := tcpExt[n]; ok {
			got[n] = v
		} else {
			missing = append(missing, n)
		}
	}
	return got, missing
}

func fmtCounters(names []string, got map[string]int64) string {
	var parts []string
	for _, n := range names {
		if v, ok := got[n]; ok {
			parts = append(parts, fmt.Sprintf("%s=%d", n, v))
		}
	}
	return strings.Join(parts, " ")
}

// sortedKeys lists m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// SysctlKeys lists every sysctl key (dotted) the shipped rules read, for
// the gatherer: every key a catalog check names, and those Go rules read.
// vm-dirty reads vm.dirty_bytes and vm.dirty_background_bytes, which
// replace the ratios it checks when non-zero.
func SysctlKeys() []string { return shipped.SysctlKeys() }

// SysctlKeys lists every sysctl key the set's rules read (SysctlKeys).
func (s *Set) SysctlKeys() []string {
	keys := map[string]bool{
		KeySyncookies:               true,
		KeySomaxconn:                true,
		KeySynBacklog:               true,
		"vm.dirty_bytes":            true,
		"vm.dirty_background_bytes": true,
		KeyMaxMapCount:              true,
	}
	for _, t := range s.checked() {
		keys[t.Key] = true
	}
	for _, k := range peerSysctls(s.rules) {
		keys[k] = true
	}
	for _, k := range hostSysctls {
		keys[k] = true
	}
	return sortedKeys(keys)
}

// PropertyKeys lists the server.properties keys the shipped rules' checks
// name (check properties:), for the gatherer, which reads them beside its
// own (gather.KafkaKeys) and no other key of the file.
func PropertyKeys() []string { return shipped.PropertyKeys() }

// PropertyKeys lists the property keys the set's checks name (PropertyKeys).
func (s *Set) PropertyKeys() []string {
	keys := map[string]bool{}
	for _, r := range s.rules {
		if r.Check != nil {
			for _, p := range r.Check.Properties {
				keys[p.Key] = true
			}
		}
	}
	return sortedKeys(keys)
}

// Files lists the /proc and /sys files the shipped rules read
// (facts.Facts.Files): the host rules' and every peers: file:PATH entry's.
func Files() []string { return shipped.Files() }

// Files lists the files the set's rules read (Files).
func (s *Set) Files() []string {
	keys := map[string]bool{}
	for _, k := range hostFiles {
		keys[k] = true
	}
	for _, k := range peerFiles(s.rules) {
		keys[k] = true
	}
	return sortedKeys(keys)
}

// checked lists every check item of the set, in catalog order.
func (s *Set) checked() []SysctlCheck {
	var out []SysctlCheck
	for _, r := range s.rules {
		if r.Check != nil {
			out = append(out, r.Check.Sysctls...)
		}
	}
	return out
}
