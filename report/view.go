package report

// Helpers shared by the human-facing renderers (table, markdown, html) and
// the machine ones (junit, prometheus). They only read the report: no
// renderer recomputes scores or looks at the clock.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unique"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/internal/words"
	"github.com/kaudit/kaudit/rules"
)

const (
	reportTitle = "kaudit pre-upgrade compliance report"
	// maxListedHosts is how many host names a grouped finding lists before "+N more".
	maxListedHosts = 8
	// defaultKafkaPort is used when facts carry no port (older reports).
	defaultKafkaPort = 9092
)

// scanTime is the report's start time in UTC, the only clock a renderer uses.
func scanTime(r *Report) string {
	if r.StartedAt.IsZero() {
		return "unknown time"
	}
	return r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
}

// humanDuration prints milliseconds as a short Go duration (12.3s, 850ms).
func humanDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(100 * time.Millisecond)
	}
	return d.String()
}

// statusOrder ranks statuses for display: what needs attention first.
// Unknown and error sit right after fail: neither proves the host safe.
var statusOrder = map[rules.Status]int{
	rules.Fail: 0, rules.Unknown: 1, rules.Error: 2, rules.Warn: 3, rules.Waived: 4, rules.Skip: 5, rules.Pass: 6,
}

func statusRank(s rules.Status) int {
	if r, ok := statusOrder[s]; ok {
		return r
	}
	return len(statusOrder)
}

// sortedFindings returns a copy of fs sorted by severity (highest first),
// then status (fail first), keeping the catalog order otherwise.
func sortedFindings(fs []rules.Finding) []rules.Finding {
	out := append([]rules.Finding(nil), fs...)
	slices.SortStableFunc(out, func(a, b rules.Finding) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(statusRank(a.Status), statusRank(b.Status)))
	})
	return out
}

// ruleOrder lists rule IDs in the order they first appear in the report's
// findings, which is the catalog order the rules engine emits them in.
func ruleOrder(r *Report) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if !seen[f.Rule] {
				seen[f.Rule] = true
				out = append(out, f.Rule)
			}
		}
	}
	return out
}

// ruleTitles maps rule IDs to the first title seen for them.
func ruleTitles(r *Report) map[string]string {
	out := map[string]string{}
	for _, h := range r.Hosts {
		for _, f := range h.Findings {
			if _, ok := out[f.Rule]; !ok && f.Title != "" {
				out[f.Rule] = f.Title
			}
		}
	}
	return out
}

// hostCounts is one host's findings counted by status (fails by severity).
type hostCounts struct {
	Fail    map[rules.Severity]int
	Unknown int
	Warn    int
	Error   int
	Skip    int
	Pass    int
}

func (c hostCounts) failures() int {
	n := 0
	for _, v := range c.Fail {
		n += v
	}
	return n
}

func countHost(h *Host) hostCounts {
	c := hostCounts{Fail: map[rules.Severity]int{}}
	for _, f := range h.Findings {
		switch f.Status {
		case rules.Fail:
			c.Fail[f.Severity]++
		case rules.Unknown:
			c.Unknown++
		case rules.Warn:
			c.Warn++
		case rules.Error:
			c.Error++
		case rules.Skip:
			c.Skip++
		case rules.Pass:
			c.Pass++
		}
	}
	return c
}

// kafkaPort is the broker port the facts were gathered for.
func kafkaPort(f *facts.Facts) int {
	if f == nil || f.KafkaPort == 0 {
		return defaultKafkaPort
	}
	return f.KafkaPort
}

// effectiveBacklog is the Send-Q of the Kafka listener, "-" when no
// listener on the Kafka port was seen. With several sockets on the port
// (0.0.0.0 and [::]) the smallest one is what a client may hit.
func effectiveBacklog(f *facts.Facts) string {
	if f == nil {
		return "-"
	}
	port := kafkaPort(f)
	best := -1
	for _, l := range f.Listeners {
		if l.Port == port && (best < 0 || l.Backlog < best) {
			best = l.Backlog
		}
	}
	if best < 0 {
		return "-"
	}
	return strconv.Itoa(best)
}

func kernelRelease(f *facts.Facts) string {
	if f == nil || f.Kernel.Release == "" {
		return "-"
	}
	return f.Kernel.Release
}

// kafkaVersion is the broker version as the jar names it, " (CP)" for
// Confluent Platform numbers.
func kafkaVersion(f *facts.Facts) string {
	if f == nil || f.Kafka == nil || f.Kafka.Version == "" {
		return "-"
	}
	if f.Kafka.Distribution == "confluent" {
		return f.Kafka.Version + " (CP)"
	}
	return f.Kafka.Version
}

// hostList joins host names, truncated after max with "+N more".
func hostList(hosts []string, max int) string {
	if max > 0 && len(hosts) > max {
		return strings.Join(hosts[:max], ", ") + fmt.Sprintf(" +%d more", len(hosts)-max)
	}
	return strings.Join(hosts, ", ")
}

// observedExpected is "observed → expected" with "?" for a missing side,
// "" when both are empty.
func observedExpected(f rules.Finding) string {
	if f.Observed == "" && f.Expected == "" {
		return ""
	}
	return cmp.Or(f.Observed, "?") + " → " + cmp.Or(f.Expected, "?")
}

// failCounts is "1 critical, 3 high, 0 medium, ..." over every severity.
func failCounts(s Summary) string {
	parts := make([]string, 0, len(rules.Severities()))
	for _, sev := range rules.Severities() {
		parts = append(parts, fmt.Sprintf("%d %s", s.FailBySeverity[string(sev)], sev))
	}
	return strings.Join(parts, ", ")
}

// fleetScore is "58 (min 0)", or "n/a" when no host was audited.
func fleetScore(s Summary) string {
	if s.Audited == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d (min %d)", s.Score, s.MinScore)
}

// errorHosts lists the hosts that could not be audited.
func errorHosts(r *Report) []Host {
	var out []Host
	for _, h := range r.Hosts {
		if h.Error != nil {
			out = append(out, h)
		}
	}
	return out
}

// oneLine folds newlines and runs of whitespace so a value fits a cell.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// verdict is the one-sentence result a reviewer reads first, as a label
// ("Not ready", "Not proven", "Ready") and a plain-text detail. It follows
// the exit-code contract: failures at or above fail-on (default high)
// block; hosts not audited and unknown findings are called out, never
// read as safe.
func verdict(r *Report) (label, detail string) {
	failOn := rules.High
	if sev, ok := rules.ParseSeverity(r.FailOn); ok {
		failOn = sev
	}
	blocking := 0
	for sev, n := range r.Summary.FailBySeverity {
		if rules.Severity(sev).Rank() >= failOn.Rank() {
			blocking += n
		}
	}
	unknown := r.Summary.StatusCounts[string(rules.Unknown)]
	var caveats []string
	if r.Summary.Unreachable > 0 {
		caveats = append(caveats, words.Count(r.Summary.Unreachable, "host was", "hosts were")+" not audited")
	}
	if unknown > 0 {
		caveats = append(caveats, words.Count(unknown, "finding is", "findings are")+" unknown (not proven safe)")
	}
	switch {
	case len(r.Hosts) == 0:
		return "Not proven", "the report holds no host."
	case blocking > 0:
		detail = fmt.Sprintf("%s at or above %s.", words.Count(blocking, "failing finding", "failing findings"), failOn)
		if len(caveats) > 0 {
			detail += " Also: " + strings.Join(caveats, " and ") + "."
		}
		return "Not ready", detail
	case len(caveats) > 0:
		return "Not proven", fmt.Sprintf("no failing finding at or above %s, but %s.", failOn, strings.Join(caveats, " and "))
	}
	return "Ready", fmt.Sprintf("no failing finding at or above %s, every host audited, nothing unknown.", failOn)
}

// waiverNote is what the waiver said about a waived finding (the waiver
// package appends it to the evidence), or its reason.
func waiverNote(f rules.Finding) string {
	for i := len(f.Evidence) - 1; i >= 0; i-- {
		if strings.Contains(f.Evidence[i], "waive") {
			return f.Evidence[i]
		}
	}
	return f.Reason
}

// viewFacts is what the formats other than JSON read of f (kafkaPort,
// effectiveBacklog, kernelRelease, kafkaVersion, osDescription,
// sectionGaps, MetaClusterID, the client role): what a spooled host keeps
// in memory so that those formats need not load its facts back
// (SpooledFacts.view). Strings are interned copies (unique.Make clones
// them): nothing pins the gathered output they were parsed from, and the
// texts hosts repeat (kernel, distribution, section states) are held once. A renderer that reads another
// fact must be given it here: TestSpooledRendersTheSameBytes fails
// otherwise.
func viewFacts(f *facts.Facts) *facts.Facts {
	c := func(s string) string { return unique.Make(s).Value() }
	k := f.Kernel
	out := &facts.Facts{
		KafkaPort: f.KafkaPort, Role: facts.Role(c(string(f.Role))),
		Kernel: facts.Kernel{Release: c(k.Release), Pretty: c(k.Pretty), Distro: c(k.Distro),
			DistroVer: c(k.DistroVer), Signature: c(k.Signature), Arch: c(k.Arch)},
	}
	port := kafkaPort(f)
	for _, l := range f.Listeners {
		if l.Port == port {
			out.Listeners = append(out.Listeners, facts.Listener{Port: l.Port, Backlog: l.Backlog})
		}
	}
	for name, s := range f.Sections {
		if out.Sections == nil {
			out.Sections = make(map[string]facts.SectionStatus, len(f.Sections))
		}
		out.Sections[c(name)] = facts.SectionStatus{State: facts.SectionState(c(string(s.State))), Message: c(s.Message)}
	}
	if kf := f.Kafka; kf != nil {
		out.Kafka = &facts.Kafka{Version: c(kf.Version), Distribution: c(kf.Distribution), Config: c(kf.Config)}
		for _, d := range kf.LogDirs {
			if d.Meta != nil {
				out.Kafka.LogDirs = append(out.Kafka.LogDirs, facts.LogDir{Meta: &facts.MetaProperties{ClusterID: c(d.Meta.ClusterID)}})
			}
		}
	}
	return out
}
