package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

// Assume is a hypothetical upgrade of every audited host.
type Assume struct {
	// Kernel is the kernel release after the upgrade ("" = unchanged). A
	// kernel upgrade means a reboot: runtime sysctls take their persisted
	// (boot-time) values and the Kafka listener is re-created.
	Kernel string `json:"kernel,omitempty"`
	// Kafka is the Kafka version after the upgrade ("" = unchanged):
	// "3.6.1" upgrades Apache Kafka brokers, "confluent:7.6.0" Confluent
	// Platform ones, "3.6.1,confluent:7.6.0" both; brokers of a
	// distribution without a version keep theirs. An upgrade means a
	// broker restart.
	Kafka string `json:"kafka,omitempty"`
}

// RestartRules must pass (or not apply) on every host of a cluster for a
// rolling restart to be called safe: the restart-storm failure needs all of
// them (the kernel bug, cookies firing, a backlog too small to absorb the
// reconnects).
var RestartRules = []string{"kernel-synack-wscale", "syncookies-fired", "kafka-backlog-hardcoded", "listen-backlog-effective"}

// RestartVerdict says whether a cluster (an inventory group) can be
// rolling-restarted now and after the assumed upgrade.
type RestartVerdict struct {
	Cluster       string   `json:"cluster"`
	Hosts         []string `json:"hosts"`
	SafeNow       bool     `json:"safe_now"`
	SafeAfter     bool     `json:"safe_after"`
	BlockersNow   []string `json:"blockers_now"` // "host: rule status"
	BlockersAfter []string `json:"blockers_after"`
}

// WhatIf is the effect of an assumed upgrade on a report.
type WhatIf struct {
	Assume       Assume           `json:"assume"`
	Assumptions  []string         `json:"assumptions"`   // how the upgrade was modelled
	Fixes        []Change         `json:"fixes"`         // fail, unknown or error now; pass, warn or skip after
	Introduces   []Change         `json:"introduces"`    // not fail now, fail after
	StillFailing []Change         `json:"still_failing"` // fail now and after
	Other        []Change         `json:"other_changes"` // any other status change (e.g. pass → unknown)
	Facts        []FactChange     `json:"facts_changed"` // what the model changed per host
	Clusters     []RestartVerdict `json:"rolling_restart"`
	// After is the report as it would be after the upgrade.
	After *report.Report `json:"-"`
}

// ParseAssumeKafka reads --assume-kafka: comma-separated versions, each
// optionally prefixed with its distribution ("3.6.1", "apache:3.6.1",
// "confluent:7.6.0"); an unprefixed version is Apache Kafka. It returns
// distribution → version.
func ParseAssumeKafka(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		dist, ver := "apache", item
		if i := strings.IndexByte(item, ':'); i >= 0 {
			dist, ver = strings.ToLower(item[:i]), item[i+1:]
			if dist != "apache" && dist != "confluent" {
				return nil, fmt.Errorf("--assume-kafka %q: distribution must be apache or confluent", item)
			}
		}
		parts := strings.Split(ver, ".")
		ok := len(parts) >= 2 && len(parts) <= 4
		for _, p := range parts {
			if _, err := strconv.Atoi(p); err != nil {
				ok = false
			}
		}
		if !ok {
			return nil, fmt.Errorf("--assume-kafka %q: expected a version such as 3.6.1 or confluent:7.6.0", item)
		}
		if _, dup := out[dist]; dup {
			return nil, fmt.Errorf("--assume-kafka %q: two versions for %s", s, dist)
		}
		out[dist] = ver
	}
	return out, nil
}

// ValidateKernelRelease accepts what /proc/sys/kernel/osrelease can hold.
func ValidateKernelRelease(s string) error {
	if s == "" || len(s) > 64 || !(s[0] >= '0' && s[0] <= '9') || strings.ContainsAny(s, " \t\n/") {
		return fmt.Errorf("--assume-kernel %q: expected a kernel release such as 5.15.0-91-generic or 6.1.0", s)
	}
	return nil
}

// EvaluateWhatIf re-evaluates every audited host of r on a copy of its
// facts with the assumed kernel release and/or Kafka version, and compares
// the findings. profileFor returns the thresholds of a host (nil: the
// default profile). r itself is not modified; hosts that could not be
// audited stay as they are.
func EvaluateWhatIf(r *report.Report, a Assume, profileFor func(host string) rules.Profile) (*WhatIf, error) {
	var kvers map[string]string
	if a.Kafka != "" {
		var err error
		if kvers, err = ParseAssumeKafka(a.Kafka); err != nil {
			return nil, err
		}
	}
	if a.Kernel != "" {
		if err := ValidateKernelRelease(a.Kernel); err != nil {
			return nil, err
		}
	}
	if profileFor == nil {
		profileFor = func(string) rules.Profile { return rules.DefaultProfile() }
	}
	w := &WhatIf{Assume: a, Fixes: []Change{}, Introduces: []Change{}, StillFailing: []Change{}, Other: []Change{}, Facts: []FactChange{}}
	if a.Kernel != "" {
		w.Assumptions = append(w.Assumptions,
			"kernel "+a.Kernel+" on every audited host: /proc/version, version_signature and the package changelog of the old kernel are dropped",
			"the kernel upgrade reboots the host: runtime sysctls take their persisted boot-time values where a file sets them (others keep their current value)")
	}
	if a.Kafka != "" {
		for _, d := range []string{"apache", "confluent"} {
			if v, ok := kvers[d]; ok {
				what := "Apache Kafka " + v + " on every Apache Kafka broker (and brokers of unrecorded distribution)"
				if d == "confluent" {
					what = "Confluent Platform " + v + " on every Confluent broker"
				}
				w.Assumptions = append(w.Assumptions, what)
			} else {
				w.Assumptions = append(w.Assumptions, d+" brokers keep their Kafka version")
			}
		}
	}
	if a.Kernel != "" || a.Kafka != "" {
		w.Assumptions = append(w.Assumptions,
			"the broker is restarted: its listener backlog becomes min(socket.listen.backlog.size if Kafka ≥ 3.2 else 50, net.core.somaxconn)",
			"TcpExt counters and kernel-log evidence are kept: they record what already happened under this load")
	}

	after := cloneReport(r)
	for i := range after.Hosts {
		h := &after.Hosts[i]
		if h.Error != nil || h.Facts == nil {
			continue
		}
		f := h.Facts
		p := profileFor(h.Name)
		if a.Kernel != "" {
			f.Kernel.Release = a.Kernel
			f.Kernel.Version, f.Kernel.Signature, f.Kernel.Changelog = "", "", nil
			if _, bad := f.Sections[facts.SecPersisted]; !bad {
				for k, ps := range f.Persisted {
					if _, gathered := f.Sysctl[k]; gathered {
						f.Sysctl[k] = ps.Value
					}
				}
			}
		}
		if f.Kafka != nil && f.Kafka.Version != "" {
			dist := strings.ToLower(f.Kafka.Distribution)
			if dist == "" {
				dist = "apache"
			}
			if v, ok := kvers[dist]; ok {
				f.Kafka.Version, f.Kafka.Distribution, f.Kafka.Jar = v, dist, ""
			}
		}
		if a.Kernel != "" || a.Kafka != "" {
			relisten(f, p)
		}
		old := r.Hosts[i]
		// A gathered but empty persisted-sysctl map does not survive the
		// JSON report (omitempty): restore it when the scan had settled
		// sysctl-persisted, so the rule does not turn unknown here.
		if f.Persisted == nil && settled(old.Findings, "sysctl-persisted") {
			f.Persisted = map[string]facts.PersistedSysctl{}
		}
		w.Facts = append(w.Facts, factChanges(&old, h)...)
		w.Facts = append(w.Facts, backlogChange(old.Facts, f, h.Name)...)
		h.Findings = rules.Evaluate(f, p)
	}
	report.Summarize(after)
	w.After = after

	for i := range after.Hosts {
		nh, oh := &after.Hosts[i], &r.Hosts[i]
		olds := map[string]rules.Finding{}
		for _, f := range oh.Findings {
			olds[f.Rule] = f
		}
		for _, nf := range nh.Findings {
			of := olds[nf.Rule]
			c := Change{Host: nh.Name, Rule: nf.Rule, Severity: nf.Severity, OldStatus: of.Status, NewStatus: nf.Status, OldObserved: of.Observed, NewObserved: nf.Observed, Reason: nf.Reason}
			switch {
			case of.Status == rules.Fail && nf.Status == rules.Fail:
				w.StillFailing = append(w.StillFailing, c)
			case nf.Status == rules.Fail:
				w.Introduces = append(w.Introduces, c)
			case (of.Status == rules.Fail || of.Status == rules.Unknown || of.Status == rules.Error) && passing(nf.Status):
				w.Fixes = append(w.Fixes, c)
			case of.Status != nf.Status:
				w.Other = append(w.Other, c)
			}
		}
	}
	for _, cs := range []*[]Change{&w.Fixes, &w.Introduces, &w.StillFailing, &w.Other} {
		sortChanges(*cs)
	}
	w.Clusters = restartVerdicts(r, after)
	return w, nil
}

// relisten models a broker restart: the listener on the Kafka port is
// re-created with min(requested backlog, somaxconn).
func relisten(f *facts.Facts, p rules.Profile) {
	if f.Kafka == nil || len(f.Listeners) == 0 {
		return
	}
	somax, err := strconv.Atoi(strings.TrimSpace(f.Sysctl["net.core.somaxconn"]))
	if err != nil {
		return // cannot model it: leave the observed backlog
	}
	// Whether the (assumed) Kafka honours socket.listen.backlog.size is the
	// verdict of kafka-backlog-hardcoded on these facts.
	atLeast32 := false
	for _, fd := range rules.Evaluate(f, p) {
		if fd.Rule == "kafka-backlog-hardcoded" {
			switch fd.Status {
			case rules.Pass:
				atLeast32 = true
			case rules.Fail:
			default:
				return // unknown: leave the observed backlog
			}
		}
	}
	requested := 50
	if atLeast32 {
		if v, ok := f.Kafka.Properties["socket.listen.backlog.size"]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return
			}
			requested = n
		}
	}
	port := f.KafkaPort
	if port == 0 {
		port = 9092
	}
	for i := range f.Listeners {
		if f.Listeners[i].Port == port {
			f.Listeners[i].Backlog = min(requested, somax)
		}
	}
}

func settled(fs []rules.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return f.Status != rules.Unknown && f.Status != rules.Error
		}
	}
	return false
}

func backlogChange(of, nf *facts.Facts, host string) []FactChange {
	if of == nil || nf == nil || len(of.Listeners) != len(nf.Listeners) {
		return nil
	}
	var out []FactChange
	for i := range of.Listeners {
		o, n := of.Listeners[i], nf.Listeners[i]
		if o.Backlog != n.Backlog {
			out = append(out, FactChange{Host: host, Fact: fmt.Sprintf("listener %s:%d backlog", n.Addr, n.Port), Old: strconv.Itoa(o.Backlog), New: strconv.Itoa(n.Backlog)})
		}
	}
	return out
}

func cloneReport(r *report.Report) *report.Report {
	data, err := json.Marshal(r)
	if err != nil {
		panic("diff: cannot copy report: " + err.Error())
	}
	var c report.Report
	if err := json.Unmarshal(data, &c); err != nil {
		panic("diff: cannot copy report: " + err.Error())
	}
	return &c
}

func restartVerdicts(now, after *report.Report) []RestartVerdict {
	clusters := map[string][]int{}
	for i, h := range now.Hosts {
		groups := h.Groups
		if len(groups) == 0 {
			groups = []string{"(ungrouped)"}
		}
		for _, g := range groups {
			clusters[g] = append(clusters[g], i)
		}
	}
	names := make([]string, 0, len(clusters))
	for n := range clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []RestartVerdict{}
	for _, n := range names {
		v := RestartVerdict{Cluster: n, BlockersNow: []string{}, BlockersAfter: []string{}}
		for _, i := range clusters[n] {
			v.Hosts = append(v.Hosts, now.Hosts[i].Name)
			v.BlockersNow = append(v.BlockersNow, blockers(&now.Hosts[i])...)
			v.BlockersAfter = append(v.BlockersAfter, blockers(&after.Hosts[i])...)
		}
		v.SafeNow, v.SafeAfter = len(v.BlockersNow) == 0, len(v.BlockersAfter) == 0
		out = append(out, v)
	}
	return out
}

func blockers(h *report.Host) []string {
	if h.Error != nil {
		return []string{h.Name + ": not audited (" + h.Error.Kind + ")"}
	}
	var out []string
	for _, id := range RestartRules {
		found := false
		for _, f := range h.Findings {
			if f.Rule != id {
				continue
			}
			found = true
			if f.Status != rules.Pass && f.Status != rules.Skip {
				out = append(out, h.Name+": "+id+" "+string(f.Status))
			}
		}
		if !found {
			out = append(out, h.Name+": "+id+" not evaluated")
		}
	}
	return out
}

// WriteWhatIf renders w as a table or JSON.
func WriteWhatIf(out io.Writer, format string, w *WhatIf) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(w)
	}
	if format != "table" {
		return fmt.Errorf("unknown what-if format %q (known: table, json)", format)
	}
	ew := &errWriter{w: out}
	var assumed []string
	if w.Assume.Kernel != "" {
		assumed = append(assumed, "kernel "+w.Assume.Kernel)
	}
	if w.Assume.Kafka != "" {
		assumed = append(assumed, "Kafka "+w.Assume.Kafka)
	}
	fmt.Fprintf(ew, "What if: %s\n", strings.Join(assumed, ", "))
	for _, a := range w.Assumptions {
		fmt.Fprintf(ew, "  · %s\n", a)
	}
	hdr := "  HOST\tRULE\tSEVERITY\tNOW → AFTER\tOBSERVED AFTER\n"
	for _, s := range []struct {
		title string
		cs    []Change
	}{{"The upgrade would fix", w.Fixes}, {"The upgrade would introduce", w.Introduces}, {"Still failing after the upgrade", w.StillFailing}, {"Other changes", w.Other}} {
		fmt.Fprintf(ew, "\n%s (%d)\n", s.title, len(s.cs))
		if len(s.cs) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, hdr)
		for _, c := range s.cs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s → %s\t%s\n", c.Host, c.Rule, c.Severity, status(c.OldStatus), status(c.NewStatus), oneLine(c.NewObserved, 60))
		}
		tw.Flush()
	}
	if len(w.Facts) > 0 {
		fmt.Fprintf(ew, "\nModelled fact changes (%d)\n", len(w.Facts))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, "  HOST\tFACT\tNOW\tAFTER\n")
		for _, f := range w.Facts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", f.Host, f.Fact, orDash(f.Old), orDash(f.New))
		}
		tw.Flush()
	}
	fmt.Fprintf(ew, "\nSafe to rolling-restart? (%s must pass on every host)\n", strings.Join(RestartRules, ", "))
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "  CLUSTER\tHOSTS\tNOW\tAFTER UPGRADE\n")
	for _, v := range w.Clusters {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", v.Cluster, len(v.Hosts), verdict(v.SafeNow, v.BlockersNow), verdict(v.SafeAfter, v.BlockersAfter))
	}
	tw.Flush()
	for _, v := range w.Clusters {
		if len(v.BlockersAfter) > 0 {
			fmt.Fprintf(ew, "\n%s: blocking after the upgrade:\n", v.Cluster)
			for _, b := range v.BlockersAfter {
				fmt.Fprintf(ew, "  - %s\n", b)
			}
		}
	}
	return ew.err
}

func verdict(safe bool, blockers []string) string {
	if safe {
		return "SAFE"
	}
	return fmt.Sprintf("NOT SAFE (%d blocker(s))", len(blockers))
}
