package whatif

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/fleetpass"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
	"github.com/kaudit/kaudit/rules"
)

// Result is the effect of an assumed upgrade on a report.
type Result struct {
	// Assume is the upgrade of every host when all hosts have the same
	// plan; otherwise the command-line assumptions (possibly empty) and
	// Plans tells the upgrade of each host.
	Assume       Assume            `json:"assume"`
	PerHost      bool              `json:"per_host"`           // hosts have different plans (inventory assume_kernel / assume_kafka)
	Plans        []HostPlan        `json:"plans"`              // hosts with an upgrade planned, in report order
	NoUpgrade    []string          `json:"no_upgrade_planned"` // hosts without: findings kept as they are
	Assumptions  []string          `json:"assumptions"`        // how the upgrade was modelled
	diff.Upgrade                   // fixes, introduces, still_failing, other_changes
	Facts        []diff.FactChange `json:"facts_changed"` // what the model changed per host
	Clusters     []RestartVerdict  `json:"rolling_restart"`
	// After is the report as it would be after the upgrade.
	After *report.Report `json:"-"`
}

// Evaluate re-evaluates every audited host of r on a copy of its facts
// with the assumed kernel release and/or Kafka version, and compares the
// findings. profileFor returns the thresholds of a host (nil: the default
// profile). r itself is not modified; hosts that could not be audited
// stay as they are.
func Evaluate(r *report.Report, a Assume, profileFor func(host string) rules.Profile) (*Result, error) {
	return EvaluatePlan(r, a, nil, profileFor)
}

// EvaluatePlan is Evaluate with upgrades planned per host: the upgrade of
// a host is flags, field by field, over inventory(host) (its
// assume_kernel / assume_kafka; nil: none) — a command-line flag wins over
// the inventory for every host. A host with neither a kernel nor a Kafka
// version assumed has no upgrade planned: its facts and findings are kept
// as they are, and it still counts, with them, in its cluster's
// rolling-restart verdict.
func EvaluatePlan(r *report.Report, flags Assume, inventory func(host string) Assume, profileFor func(host string) rules.Profile) (*Result, error) {
	if err := validateFlags(flags); err != nil {
		return nil, err
	}
	if profileFor == nil {
		profileFor = func(string) rules.Profile { return rules.DefaultProfile() }
	}
	if slices.ContainsFunc(r.Hosts, func(h report.Host) bool { return h.Spooled != nil }) {
		return nil, errors.New("what-if: the report's facts are spooled (pipeline.Config.SpoolFacts); scan without spooling to model an upgrade")
	}
	w := &Result{Assume: flags, Plans: []HostPlan{}, NoUpgrade: []string{}, Upgrade: diff.NewUpgrade(), Facts: []diff.FactChange{}}
	plans, kvers, err := planHosts(r, flags, inventory)
	if err != nil {
		return nil, err
	}
	w.setPlans(plans)
	w.Assumptions = assumptions(w, kvers)

	after := cloneReport(r)
	for i := range after.Hosts {
		h := &after.Hosts[i]
		if h.Error != nil || h.Facts == nil || !plans[i].planned() {
			continue
		}
		model(h.Facts, plans[i], kvers[plans[i].Kafka], r.Hosts[i].Findings)
		w.Facts = append(w.Facts, diff.FactChanges(&r.Hosts[i], h)...)
		w.Facts = append(w.Facts, backlogChange(r.Hosts[i].Facts, h.Facts, h.Name)...)
		h.Findings = rules.Evaluate(h.Facts, profileFor(h.Name))
	}
	fleetpass.Run(after)
	report.Summarize(after)
	w.After = after
	for i := range after.Hosts {
		if plans[i].planned() {
			w.AddHost(&r.Hosts[i], &after.Hosts[i])
		}
	}
	w.Sort()
	noUpgrade := map[string]bool{}
	for _, n := range w.NoUpgrade {
		noUpgrade[n] = true
	}
	w.Clusters = restartVerdicts(r, after, noUpgrade)
	return w, nil
}

func validateFlags(flags Assume) error {
	if flags.Kafka != "" {
		if _, err := ParseAssumeKafka(flags.Kafka); err != nil {
			return err
		}
	}
	if flags.Kernel != "" {
		return ValidateKernelRelease(flags.Kernel)
	}
	return nil
}

// planHosts is the plan of every host of r, and the Kafka versions each
// plan means (assume_kafka value → distribution → version).
func planHosts(r *report.Report, flags Assume, inventory func(host string) Assume) ([]HostPlan, map[string]map[string]string, error) {
	plans := make([]HostPlan, len(r.Hosts))
	kvers := map[string]map[string]string{}
	for i, h := range r.Hosts {
		p, err := planHost(h.Name, flags, inventory)
		if err != nil {
			return nil, nil, err
		}
		if _, done := kvers[p.Kafka]; p.Kafka != "" && !done {
			what := "--assume-kafka"
			if p.KafkaFrom == "inventory" {
				what = "host " + h.Name + ": assume_kafka"
			}
			m, err := parseKafka(p.Kafka, what)
			if err != nil {
				return nil, nil, err
			}
			kvers[p.Kafka] = m
		}
		plans[i] = p
	}
	return plans, kvers, nil
}

// planHost is the upgrade of one host: the flags, each over the inventory.
func planHost(name string, flags Assume, inventory func(host string) Assume) (HostPlan, error) {
	p := HostPlan{Host: name, Kernel: flags.Kernel, Kafka: flags.Kafka}
	if p.Kernel != "" {
		p.KernelFrom = "--assume-kernel"
	}
	if p.Kafka != "" {
		p.KafkaFrom = "--assume-kafka"
	}
	if inventory == nil {
		return p, nil
	}
	inv := inventory(name)
	if p.Kernel == "" && inv.Kernel != "" {
		if err := validateKernel(inv.Kernel, "host "+name+": assume_kernel"); err != nil {
			return p, err
		}
		p.Kernel, p.KernelFrom = inv.Kernel, "inventory"
	}
	if p.Kafka == "" && inv.Kafka != "" {
		p.Kafka, p.KafkaFrom = inv.Kafka, "inventory"
	}
	return p, nil
}

// setPlans fills Plans, NoUpgrade, PerHost and, for one plan for all, Assume.
func (w *Result) setPlans(plans []HostPlan) {
	for _, p := range plans {
		if p.planned() {
			w.Plans = append(w.Plans, p)
		} else {
			w.NoUpgrade = append(w.NoUpgrade, p.Host)
		}
	}
	w.PerHost = len(w.NoUpgrade) > 0
	for _, p := range plans {
		w.PerHost = w.PerHost || p.assume() != plans[0].assume()
	}
	if !w.PerHost && len(plans) > 0 {
		w.Assume = plans[0].assume()
	}
}

// model rewrites f as the upgrade plan would leave it: the new kernel
// after a reboot, the new Kafka version, the listener re-created. kafka is
// distribution → version of the plan; old the host's findings now.
func model(f *facts.Facts, plan HostPlan, kafka map[string]string, old []rules.Finding) {
	if plan.Kernel != "" {
		reboot(f, plan.Kernel)
	}
	if f.Kafka != nil && f.Kafka.Version != "" {
		dist := strings.ToLower(f.Kafka.Distribution)
		dist = cmp.Or(dist, "apache")
		if v, ok := kafka[dist]; ok {
			f.Kafka.Version, f.Kafka.Distribution, f.Kafka.Jar = v, dist, ""
		}
	}
	relisten(f)
	// A gathered but empty persisted-sysctl map does not survive the
	// JSON report (omitempty): restore it when the scan had settled
	// sysctl-persisted, so the rule does not turn unknown here.
	if f.Persisted == nil && settled(old, rules.RuleSysctlPersisted) {
		f.Persisted = map[string]facts.PersistedSysctl{}
	}
}

// reboot models a kernel upgrade: the old kernel's evidence is dropped
// and runtime sysctls take their persisted boot-time values.
func reboot(f *facts.Facts, release string) {
	f.Kernel.Release = release
	f.Kernel.Version, f.Kernel.Signature, f.Kernel.Changelog = "", "", nil
	if _, bad := f.Sections[facts.SecPersisted]; bad {
		return
	}
	for k, ps := range f.Persisted {
		if _, gathered := f.Sysctl[k]; gathered {
			f.Sysctl[k] = ps.Value
		}
	}
}

// relisten models a broker restart: the listeners on its Kafka ports
// (rules.KafkaPorts) are re-created with min(requested backlog, somaxconn).
func relisten(f *facts.Facts) {
	if f.Kafka == nil || len(f.Listeners) == 0 {
		return
	}
	somax, err := strconv.Atoi(strings.TrimSpace(f.Sysctl[rules.KeySomaxconn]))
	if err != nil {
		return // cannot model it: leave the observed backlog
	}
	requested, ok := rules.RequestedBacklog(f.Kafka)
	if !ok {
		return // version or property unknown: leave the observed backlog
	}
	ports := rules.KafkaPorts(f)
	for i := range f.Listeners {
		if slices.Contains(ports, f.Listeners[i].Port) {
			f.Listeners[i].Backlog = rules.EffectiveBacklog(requested, somax)
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

func backlogChange(of, nf *facts.Facts, host string) []diff.FactChange {
	if of == nil || nf == nil || len(of.Listeners) != len(nf.Listeners) {
		return nil
	}
	var out []diff.FactChange
	for i := range of.Listeners {
		o, n := of.Listeners[i], nf.Listeners[i]
		if o.Backlog != n.Backlog {
			out = append(out, diff.FactChange{Host: host, Fact: fmt.Sprintf("listener %s:%d backlog", n.Addr, n.Port), Old: strconv.Itoa(o.Backlog), New: strconv.Itoa(n.Backlog)})
		}
	}
	return out
}

func cloneReport(r *report.Report) *report.Report {
	data, err := json.Marshal(r)
	if err != nil {
		panic("whatif: cannot copy report: " + err.Error())
	}
	var c report.Report
	if err := json.Unmarshal(data, &c); err != nil {
		panic("whatif: cannot copy report: " + err.Error())
	}
	return &c
}
