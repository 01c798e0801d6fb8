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
	"github.com/kaudit/kaudit/internal/assume"
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

// HostPlan is the upgrade assumed for one host.
type HostPlan struct {
	Host       string `json:"host"`
	Kernel     string `json:"kernel,omitempty"`
	Kafka      string `json:"kafka,omitempty"`
	KernelFrom string `json:"kernel_from,omitempty"` // "--assume-kernel" or "inventory"
	KafkaFrom  string `json:"kafka_from,omitempty"`  // "--assume-kafka" or "inventory"
}

func (p HostPlan) assume() Assume { return Assume{Kernel: p.Kernel, Kafka: p.Kafka} }

// planned reports whether the host has an upgrade planned at all.
func (p HostPlan) planned() bool { return p.Kernel != "" || p.Kafka != "" }

// WhatIf is the effect of an assumed upgrade on a report.
type WhatIf struct {
	// Assume is the upgrade of every host when all hosts have the same
	// plan; otherwise the command-line assumptions (possibly empty) and
	// Plans tells the upgrade of each host.
	Assume       Assume           `json:"assume"`
	PerHost      bool             `json:"per_host"`           // hosts have different plans (inventory assume_kernel / assume_kafka)
	Plans        []HostPlan       `json:"plans"`              // hosts with an upgrade planned, in report order
	NoUpgrade    []string         `json:"no_upgrade_planned"` // hosts without: findings kept as they are
	Assumptions  []string         `json:"assumptions"`        // how the upgrade was modelled
	Fixes        []Change         `json:"fixes"`              // fail, unknown or error now; pass, warn or skip after
	Introduces   []Change         `json:"introduces"`         // not fail now, fail after
	StillFailing []Change         `json:"still_failing"`      // fail now and after
	Other        []Change         `json:"other_changes"`      // any other status change (e.g. pass → unknown)
	Facts        []FactChange     `json:"facts_changed"`      // what the model changed per host
	Clusters     []RestartVerdict `json:"rolling_restart"`
	// After is the report as it would be after the upgrade.
	After *report.Report `json:"-"`
}

// ParseAssumeKafka reads --assume-kafka: comma-separated versions, each
// optionally prefixed with its distribution ("3.6.1", "apache:3.6.1",
// "confluent:7.6.0"); an unprefixed version is Apache Kafka. It returns
// distribution → version.
//
// The inventory settings assume_kafka / kaudit_assume_kafka take the same
// syntax: both parse it with internal/assume.
func ParseAssumeKafka(s string) (map[string]string, error) { return parseKafka(s, "--assume-kafka") }

func parseKafka(s, what string) (map[string]string, error) {
	out, perr := assume.Kafka(s)
	switch {
	case perr == nil:
		return out, nil
	case perr.Kind == assume.BadDistribution:
		return nil, fmt.Errorf("%s %q: distribution must be apache or confluent", what, perr.Item)
	case perr.Kind == assume.Duplicate:
		return nil, fmt.Errorf("%s %q: two versions for %s", what, s, perr.Dist)
	default:
		return nil, fmt.Errorf("%s %q: expected a version such as 3.6.1 or confluent:7.6.0", what, perr.Item)
	}
}

// maxKernelRelease bounds an assumed kernel release; the inventory's
// assume_kernel has the same bound.
const maxKernelRelease = 128

// ValidateKernelRelease accepts a kernel release as uname -r prints it.
func ValidateKernelRelease(s string) error { return validateKernel(s, "--assume-kernel") }

func validateKernel(s, what string) error {
	if s == "" || len(s) > maxKernelRelease || !(s[0] >= '0' && s[0] <= '9') || strings.ContainsAny(s, " \t\n/") {
		return fmt.Errorf("%s %q: expected a kernel release such as 5.15.0-91-generic or 6.1.0", what, s)
	}
	return nil
}

// EvaluateWhatIf re-evaluates every audited host of r on a copy of its
// facts with the assumed kernel release and/or Kafka version, and compares
// the findings. profileFor returns the thresholds of a host (nil: the
// default profile). r itself is not modified; hosts that could not be
// audited stay as they are.
func EvaluateWhatIf(r *report.Report, a Assume, profileFor func(host string) rules.Profile) (*WhatIf, error) {
	return EvaluatePlan(r, a, nil, profileFor)
}

// EvaluatePlan is EvaluateWhatIf with upgrades planned per host: the
// upgrade of a host is flags, field by field, over inventory(host) (its
// assume_kernel / assume_kafka; nil: none) — a command-line flag wins over
// the inventory for every host. A host with neither a kernel nor a Kafka
// version assumed has no upgrade planned: its facts and findings are kept
// as they are, and it still counts, with them, in its cluster's
// rolling-restart verdict.
func EvaluatePlan(r *report.Report, flags Assume, inventory func(host string) Assume, profileFor func(host string) rules.Profile) (*WhatIf, error) {
	if flags.Kafka != "" {
		if _, err := ParseAssumeKafka(flags.Kafka); err != nil {
			return nil, err
		}
	}
	if flags.Kernel != "" {
		if err := ValidateKernelRelease(flags.Kernel); err != nil {
			return nil, err
		}
	}
	if profileFor == nil {
		profileFor = func(string) rules.Profile { return rules.DefaultProfile() }
	}
	w := &WhatIf{Assume: flags, Plans: []HostPlan{}, NoUpgrade: []string{},
		Fixes: []Change{}, Introduces: []Change{}, StillFailing: []Change{}, Other: []Change{}, Facts: []FactChange{}}

	// The plan of every host, and the Kafka versions each plan means.
	plans := make([]HostPlan, len(r.Hosts))
	kvers := map[string]map[string]string{} // assume_kafka value → distribution → version
	for i, h := range r.Hosts {
		p := HostPlan{Host: h.Name, Kernel: flags.Kernel, Kafka: flags.Kafka}
		if p.Kernel != "" {
			p.KernelFrom = "--assume-kernel"
		}
		if p.Kafka != "" {
			p.KafkaFrom = "--assume-kafka"
		}
		if inventory != nil {
			inv := inventory(h.Name)
			if p.Kernel == "" && inv.Kernel != "" {
				if err := validateKernel(inv.Kernel, "host "+h.Name+": assume_kernel"); err != nil {
					return nil, err
				}
				p.Kernel, p.KernelFrom = inv.Kernel, "inventory"
			}
			if p.Kafka == "" && inv.Kafka != "" {
				p.Kafka, p.KafkaFrom = inv.Kafka, "inventory"
			}
		}
		if _, done := kvers[p.Kafka]; p.Kafka != "" && !done {
			what := "--assume-kafka"
			if p.KafkaFrom == "inventory" {
				what = "host " + h.Name + ": assume_kafka"
			}
			m, err := parseKafka(p.Kafka, what)
			if err != nil {
				return nil, err
			}
			kvers[p.Kafka] = m
		}
		plans[i] = p
		if p.planned() {
			w.Plans = append(w.Plans, p)
		} else {
			w.NoUpgrade = append(w.NoUpgrade, h.Name)
		}
	}
	w.PerHost = len(w.NoUpgrade) > 0
	for _, p := range plans {
		w.PerHost = w.PerHost || p.assume() != plans[0].assume()
	}
	if !w.PerHost && len(plans) > 0 {
		w.Assume = plans[0].assume()
	}
	w.Assumptions = assumptions(w, kvers)

	after := cloneReport(r)
	for i := range after.Hosts {
		h := &after.Hosts[i]
		plan := plans[i]
		if h.Error != nil || h.Facts == nil || !plan.planned() {
			continue
		}
		f := h.Facts
		p := profileFor(h.Name)
		if plan.Kernel != "" {
			f.Kernel.Release = plan.Kernel
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
			if v, ok := kvers[plan.Kafka][dist]; ok {
				f.Kafka.Version, f.Kafka.Distribution, f.Kafka.Jar = v, dist, ""
			}
		}
		relisten(f, p)
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
		if !plans[i].planned() {
			continue // findings kept as they are
		}
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
	noUpgrade := map[string]bool{}
	for _, n := range w.NoUpgrade {
		noUpgrade[n] = true
	}
	w.Clusters = restartVerdicts(r, after, noUpgrade)
	return w, nil
}

// assumptions describes how the upgrade is modelled: as before for one
// fleet-wide upgrade, with the plan of each set of hosts otherwise.
func assumptions(w *WhatIf, kvers map[string]map[string]string) []string {
	var out []string
	if !w.PerHost {
		a := w.Assume
		if a.Kernel != "" {
			out = append(out,
				"kernel "+a.Kernel+" on every audited host: /proc/version, version_signature and the package changelog of the old kernel are dropped",
				"the kernel upgrade reboots the host: runtime sysctls take their persisted boot-time values where a file sets them (others keep their current value)")
		}
		if a.Kafka != "" {
			for _, d := range []string{"apache", "confluent"} {
				if v, ok := kvers[a.Kafka][d]; ok {
					what := "Apache Kafka " + v + " on every Apache Kafka broker (and brokers of unrecorded distribution)"
					if d == "confluent" {
						what = "Confluent Platform " + v + " on every Confluent broker"
					}
					out = append(out, what)
				} else {
					out = append(out, d+" brokers keep their Kafka version")
				}
			}
		}
	} else {
		// One line per distinct plan, in report order of its first host.
		var order []string
		hosts := map[string][]string{}
		for _, p := range w.Plans {
			k := planLabel(p)
			if _, seen := hosts[k]; !seen {
				order = append(order, k)
			}
			hosts[k] = append(hosts[k], p.Host)
		}
		for _, k := range order {
			out = append(out, k+" on "+hostList(hosts[k]))
		}
		if len(w.NoUpgrade) > 0 {
			out = append(out, "no upgrade planned on "+hostList(w.NoUpgrade)+": their findings are kept as they are and count in their cluster's rolling-restart verdict")
		}
		kernel, kafka := false, false
		for _, p := range w.Plans {
			kernel, kafka = kernel || p.Kernel != "", kafka || p.Kafka != ""
		}
		if kernel {
			out = append(out, "a kernel upgrade reboots the host: the old kernel's /proc/version, version_signature and package changelog are dropped; runtime sysctls take their persisted boot-time values where a file sets them")
		}
		if kafka {
			out = append(out, "a Kafka version applies to the brokers of its distribution (unprefixed: Apache Kafka, and brokers of unrecorded distribution); brokers of another distribution keep theirs")
		}
	}
	if len(w.Plans) > 0 {
		restarted := "the broker is restarted"
		if w.PerHost {
			restarted = "the broker of an upgraded host is restarted"
		}
		out = append(out,
			restarted+": its listener backlog becomes min(socket.listen.backlog.size if Kafka ≥ 3.2 else 50, net.core.somaxconn)",
			"TcpExt counters and kernel-log evidence are kept: they record what already happened under this load")
	}
	return out
}

// planLabel is "kernel K (inventory), Kafka V (--assume-kafka)".
func planLabel(p HostPlan) string {
	var parts []string
	if p.Kernel != "" {
		parts = append(parts, "kernel "+p.Kernel+" ("+p.KernelFrom+")")
	}
	if p.Kafka != "" {
		parts = append(parts, "Kafka "+p.Kafka+" ("+p.KafkaFrom+")")
	}
	return strings.Join(parts, ", ")
}

// hostList names up to 8 hosts.
func hostList(hosts []string) string {
	const most = 8
	if len(hosts) <= most {
		return strings.Join(hosts, ", ")
	}
	return strings.Join(hosts[:most], ", ") + fmt.Sprintf(" and %d more", len(hosts)-most)
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

func restartVerdicts(now, after *report.Report, noUpgrade map[string]bool) []RestartVerdict {
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
			ba := blockers(&after.Hosts[i])
			if noUpgrade[now.Hosts[i].Name] {
				for j := range ba {
					ba[j] += " (no upgrade planned)"
				}
			}
			v.BlockersAfter = append(v.BlockersAfter, ba...)
		}
		v.SafeNow, v.SafeAfter = len(v.BlockersNow) == 0, len(v.BlockersAfter) == 0
		out = append(out, v)
	}
	return out
}

func blockers(h *report.Host) []string {
	if h.Error != nil {
		return []string{h.Name + ": not audited (" + string(h.Error.Kind) + ")"}
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
	if w.PerHost {
		fmt.Fprintf(ew, "What if: upgrades planned per host (%d planned, %d without)\n", len(w.Plans), len(w.NoUpgrade))
	} else {
		var assumed []string
		if w.Assume.Kernel != "" {
			assumed = append(assumed, "kernel "+w.Assume.Kernel)
		}
		if w.Assume.Kafka != "" {
			assumed = append(assumed, "Kafka "+w.Assume.Kafka)
		}
		fmt.Fprintf(ew, "What if: %s\n", strings.Join(assumed, ", "))
	}
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
