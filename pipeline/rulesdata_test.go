package pipeline_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/internal/remote"
	"github.com/kaudit/kaudit/remediate"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// cachePressureRule is a sysctl threshold rule added as YAML alone: one block
// for rules/catalog.yaml...
const cachePressureRule = `
  - id: cache-pressure
    title: vm.vfs_cache_pressure is at most the target
    severity: medium
    rationale: >-
      A test rule (the shipped catalog has no vfs_cache_pressure rule): a
      higher vfs_cache_pressure reclaims dentries and inodes sooner.
    references:
      - title: Linux kernel documentation, vm sysctls (vfs_cache_pressure)
        url: https://docs.kernel.org/admin-guide/sysctl/vm.html
    thresholds: []
    check:
      why: the kernel reclaims the log directories' dentries and inodes early
      pass: "vm.vfs_cache_pressure ≤ {cache_pressure}"
      sysctls:
        - {sysctl: vm.vfs_cache_pressure, op: at-most, profile: cache_pressure, boot_default: {value: "100"}}
    fix: sysctl -w vm.vfs_cache_pressure=1 and persist it.
`

// ...and its default for rules/profile.default.yaml.
const cachePressureDefault = "\n# vm.vfs_cache_pressure ceiling (a test key).\ncache_pressure: 1\n"

// TestThresholdRuleByYAMLAlone adds vm.vfs_cache_pressure ≤ 1 to temporary copies
// of the shipped catalog and profile, nothing else, and runs it end to
// end: load → the gather script (run on this machine, read-only) reads
// the new key → evaluate → a failing finding with the catalog's severity
// and an at-most fix → a fix plan that honours the direction.
func TestThresholdRuleByYAMLAlone(t *testing.T) {
	dir := t.TempDir()
	copyWith := func(name, extra string) (string, []byte) {
		b, err := os.ReadFile(filepath.Join("..", "rules", name))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, extra...)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, b
	}
	catName, cat := copyWith("catalog.yaml", cachePressureRule)
	profName, prof := copyWith("profile.default.yaml", cachePressureDefault)
	set, err := rules.LoadSet(catName, cat, profName, prof)
	if err != nil {
		t.Fatal(err)
	}
	p := set.DefaultProfile()
	if p.Value("cache_pressure") != 1 {
		t.Fatalf("profile key cache_pressure = %v, want 1", p.Value("cache_pressure"))
	}
	if _, err := p.With(map[string]any{"cache_pressure": 10}); err != nil {
		t.Errorf("a per-host override of the new key: %v", err)
	}
	var persisted rules.Rule
	for _, r := range set.Rules() {
		if r.ID == rules.RuleSysctlPersisted {
			persisted = r
		}
	}
	if !strings.Contains(strings.Join(persisted.Thresholds, " "), "cache_pressure") {
		t.Errorf("sysctl-persisted does not compare the new key at boot: thresholds %v", persisted.Thresholds)
	}

	// Gathered: the script reads every key the set's checks name.
	keys := set.SysctlKeys()
	if !strings.Contains(" "+strings.Join(keys, " ")+" ", " vm.vfs_cache_pressure ") {
		t.Fatalf("SysctlKeys %v lacks vm.vfs_cache_pressure", keys)
	}
	if strings.Contains(strings.Join(rules.SysctlKeys(), " "), "vm.vfs_cache_pressure") {
		t.Fatal("the shipped set reads vm.vfs_cache_pressure: the test's rule leaked")
	}
	raw, err := os.ReadFile("/proc/sys/vm/vfs_cache_pressure")
	if err != nil {
		t.Skipf("no /proc/sys/vm/vfs_cache_pressure here: %v", err)
	}
	marker := gather.NewMarker()
	script, err := gather.Script(gather.Params{KafkaPort: 9092, SysctlKeys: keys, Marker: marker})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "sh", "-s")
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gather script: %v", err)
	}
	f, err := gather.Parse(out, marker, 9092)
	if err != nil {
		t.Fatal(err)
	}
	here := strings.TrimSpace(string(raw))
	if f.Sysctl["vm.vfs_cache_pressure"] != here {
		t.Fatalf("gathered vm.vfs_cache_pressure = %q, /proc says %q", f.Sysctl["vm.vfs_cache_pressure"], here)
	}
	want := rules.Fail
	if here == "0" || here == "1" {
		want = rules.Pass
	}
	if fd := findRule(t, set.Evaluate(f, p), "cache-pressure"); fd.Status != want {
		t.Errorf("this machine's vm.vfs_cache_pressure=%s: %s (%s), want %s", here, fd.Status, fd.Reason, want)
	}

	// Evaluated on a host at the kernel default: fail, with the catalog
	// block's severity and a fix that says "at most".
	f.Sysctl["vm.vfs_cache_pressure"] = "60"
	f.Persisted = map[string]facts.PersistedSysctl{}
	fd := findRule(t, set.Evaluate(f, p), "cache-pressure")
	if fd.Status != rules.Fail || fd.Severity != rules.Medium || fd.Title != "vm.vfs_cache_pressure is at most the target" ||
		fd.Reason != "vm.vfs_cache_pressure=60 (want <= 1): the kernel reclaims the log directories' dentries and inodes early" {
		t.Fatalf("finding %+v", fd)
	}
	if fd.Fix == nil || fd.Fix.Sysctl["vm.vfs_cache_pressure"] != "1" || fd.Fix.BoundOf("vm.vfs_cache_pressure") != (rules.Bound{Dir: rules.AtMost}) {
		t.Fatalf("fix %+v", fd.Fix)
	}
	f.Sysctl["vm.vfs_cache_pressure"] = "1"
	if fd := findRule(t, set.Evaluate(f, p), "cache-pressure"); fd.Status != rules.Pass || fd.Reason != "vm.vfs_cache_pressure ≤ 1" {
		t.Errorf("at the target: %s %q", fd.Status, fd.Reason)
	}
	if fd := findRule(t, set.Evaluate(f, p), rules.RuleSysctlPersisted); !strings.Contains(fd.Reason, "vm.vfs_cache_pressure: runtime 1 not persisted: reverts to 100 at boot") {
		t.Errorf("sysctl-persisted: %s %q", fd.Status, fd.Reason)
	}
	f.Sysctl["vm.vfs_cache_pressure"] = "60"

	// Planned: 60 → 1, runtime and persisted; a second rule asking at
	// most 10 merges to 1, one asking at least 10 is a conflict. Planned
	// as on a host of its own: this machine may be a container, where a
	// kernel-wide key is never planned (TestPlanInAContainer).
	if f.Feasibility != nil {
		f.Feasibility.Container, f.Feasibility.ProcSysReadOnly = "", false
	}
	sel := remediate.Selector{Rules: []string{"cache-pressure", "other"}}
	other := func(v string, d rules.Direction) rules.Finding {
		return rules.Finding{Rule: "other", Status: rules.Fail, Fix: &rules.Fix{Summary: "x", Sysctl: map[string]string{"vm.vfs_cache_pressure": v}, Bounds: map[string]rules.Bound{"vm.vfs_cache_pressure": {Dir: d}}}}
	}
	plan := remediate.PlanHost("h", f, []rules.Finding{fd}, sel)
	if c := planned(plan, "vm.vfs_cache_pressure"); c == nil || c.From != "60" || c.To != "1" || !c.Runtime || !c.Persist {
		t.Fatalf("plan %+v", plan)
	}
	plan = remediate.PlanHost("h", f, []rules.Finding{fd, other("10", rules.AtMost)}, sel)
	if c := planned(plan, "vm.vfs_cache_pressure"); c == nil || c.To != "1" || strings.Join(c.Rules, ",") != "cache-pressure,other" {
		t.Fatalf("at most 1 and at most 10: %+v", plan)
	}
	plan = remediate.PlanHost("h", f, []rules.Finding{fd, other("10", rules.AtLeast)}, sel)
	if planned(plan, "vm.vfs_cache_pressure") != nil || len(plan.Conflicts) != 1 || !strings.Contains(plan.Conflicts[0].Reason, "no value satisfies cache-pressure: at most 1 and other: at least 10") {
		t.Fatalf("at most 1 and at least 10: %+v", plan)
	}
}

// TestDemoTunedHostMeetsTheCatalog: the demo fleet's tuned sysctls meet
// every catalog check that names a key they have, with the default
// profile: a tuned value that a changed target no longer meets fails here,
// not in the demo. A key the demo does not simulate (a rule just added as
// YAML) is unknown on the demo hosts, never a failure.
func TestDemoTunedHostMeetsTheCatalog(t *testing.T) {
	tuned := simhost.TunedSysctls()
	f := &facts.Facts{Sysctl: tuned, Kernel: facts.Kernel{Release: "6.1.0-13-amd64"}}
	checked := 0
	for _, fd := range rules.Evaluate(f, rules.DefaultProfile()) {
		r, _ := rules.Lookup(fd.Rule)
		if r.Check == nil {
			continue
		}
		all := true
		for _, c := range r.Check.Sysctls {
			if _, ok := tuned[c.Key]; !ok {
				all = false
				t.Logf("%s: the demo does not simulate %s (unknown there)", r.ID, c.Key)
			}
		}
		switch {
		case all && fd.Status != rules.Pass:
			t.Errorf("%s on the demo's tuned host: %s %s", fd.Rule, fd.Status, fd.Reason)
		case !all && fd.Status == rules.Fail:
			t.Errorf("%s fails on the demo's tuned host: %s", fd.Rule, fd.Reason)
		case all:
			checked++
		}
	}
	if checked < 6 {
		t.Errorf("only %d catalog checks judged on the demo's tuned values", checked)
	}
}

func findRule(t *testing.T, fs []rules.Finding, id string) rules.Finding {
	t.Helper()
	for _, fd := range fs {
		if fd.Rule == id {
			return fd
		}
	}
	t.Fatalf("no finding for %s", id)
	return rules.Finding{}
}

func planned(p remediate.HostPlan, target string) *remediate.Change {
	for i := range p.Changes {
		if p.Changes[i].Target == target {
			return &p.Changes[i]
		}
	}
	return nil
}

// TestPeerFactByYAMLAlone adds one file:PATH entry to the peers: list of a
// temporary copy of the shipped catalog, nothing else: the gather script
// (run on this machine, read-only) reads the file because the catalog
// names it, and the peer comparison names the broker whose value differs.
func TestPeerFactByYAMLAlone(t *testing.T) {
	const path = "/proc/sys/kernel/randomize_va_space" // a plain file no rule reads
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s here: %v", path, err)
	}
	cat, err := os.ReadFile(filepath.Join("..", "rules", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	anchor := "      - {fact: kafka.log_dirs, severity: low}\n"
	if !strings.Contains(string(cat), anchor) {
		t.Fatal("the shipped catalog's peers: list lost its kafka.log_dirs entry")
	}
	cat = []byte(strings.Replace(string(cat), anchor, anchor+"      - {fact: \"file:"+path+"\", severity: high}\n", 1))
	prof, err := os.ReadFile(filepath.Join("..", "rules", "profile.default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.LoadSet("catalog.yaml", cat, "profile.default.yaml", prof)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(set.Files(), path) || slices.Contains(rules.Files(), path) {
		t.Fatalf("Files: the set's %v must name %s, the shipped %v must not", set.Files(), path, rules.Files())
	}
	marker := gather.NewMarker()
	script, err := gather.Script(gather.Params{KafkaPort: 9092, SysctlKeys: set.SysctlKeys(), Files: set.Files(), Marker: marker})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "sh", "-s")
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gather script: %v", err)
	}
	f, err := gather.Parse(out, marker, 9092)
	if err != nil {
		t.Fatal(err)
	}
	here := strings.TrimSpace(string(raw))
	if f.Files[path] != here {
		t.Fatalf("gathered %s = %q, the file says %q", path, f.Files[path], here)
	}
	// Three brokers, the second with another value: it alone is named.
	hosts := make([]rules.FleetHost, 3)
	for i := range hosts {
		c := *f
		c.Kafka = &facts.Kafka{}
		c.Files = map[string]string{path: here}
		if i == 1 {
			c.Files[path] = here + "9"
		}
		hosts[i] = rules.FleetHost{Name: fmt.Sprintf("b%d", i), Facts: &c, Groups: []string{"k"}}
	}
	for i, fs := range set.EvaluateFleet(hosts) {
		fd := findRule(t, fs, rules.RulePeerConsistency)
		want := rules.Pass
		if i == 1 {
			want = rules.Fail
		}
		if fd.Status != want || (i == 1 && (fd.Severity != rules.High || !strings.Contains(strings.Join(fd.Evidence, "\n"), path+" "+here+"9 on b1; 2 of 3 brokers of k have "+here))) {
			t.Errorf("%s: %s/%s %q %q, want %s", hosts[i].Name, fd.Status, fd.Severity, fd.Reason, fd.Evidence, want)
		}
	}
}

// replicaFetchersRule is a threshold rule on a Kafka property added as one
// block of rules/catalog.yaml, nothing else (a literal target: no profile
// key to declare).
const replicaFetchersRule = `
  - id: replica-fetchers
    title: num.replica.fetchers is at least 2
    severity: low
    rationale: >-
      A test rule (the shipped catalog has no replica-fetchers rule): one
      fetcher thread per source broker serialises replication.
    references:
      - title: Apache Kafka broker configuration (num.replica.fetchers)
        url: https://kafka.apache.org/documentation/#brokerconfigs_num.replica.fetchers
    thresholds: []
    check:
      why: one fetcher thread per source broker serialises replication
      pass: "num.replica.fetchers ≥ 2"
      properties:
        - {property: num.replica.fetchers, op: at-least, value: "2", default: "1"}
    fix: set num.replica.fetchers=2 in server.properties and restart the broker.
`

// TestKafkaThresholdRuleByYAMLAlone adds a num.replica.fetchers ≥ 2 block
// to a temporary copy of the shipped catalog, nothing else, and runs it end
// to end: load → the gather script (run on this machine, read-only, on a
// server.properties in a temporary directory) reads the new key because
// the catalog names it, and no other key → evaluate (the file's value,
// Kafka's default when unset, the running broker's value first) → a fix
// that sets the property with a restart → a plan that edits the file.
func TestKafkaThresholdRuleByYAMLAlone(t *testing.T) {
	cat, err := os.ReadFile(filepath.Join("..", "rules", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := os.ReadFile(filepath.Join("..", "rules", "profile.default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.LoadSet("catalog.yaml", append(cat, replicaFetchersRule...), "profile.default.yaml", prof)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.PropertyKeys(); !slices.Equal(got, []string{"num.replica.fetchers"}) || slices.Contains(rules.PropertyKeys(), "num.replica.fetchers") {
		t.Fatalf("PropertyKeys: the set's %v must be the new key, the shipped %v must not hold it", got, rules.PropertyKeys())
	}

	// Gathered: the script reads the key the check names, and no key
	// nobody asked for (the file can hold secrets).
	conf := filepath.Join(t.TempDir(), "server.properties")
	body := "num.replica.fetchers = 1\nlog.retention.hours=1\nssl.keystore.password=S3cret\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	f := gatherConfig(t, gather.Params{KafkaPort: 9092, KafkaConfig: conf, PropertyKeys: set.PropertyKeys()})
	if got := f.Kafka.Properties; got["num.replica.fetchers"] != "1" || len(got) != 1 || f.Kafka.PropertyLines["num.replica.fetchers"] != 1 {
		t.Fatalf("gathered properties %v (lines %v), want num.replica.fetchers=1 alone", got, f.Kafka.PropertyLines)
	}
	if f := gatherConfig(t, gather.Params{KafkaPort: 9092, KafkaConfig: conf}); len(f.Kafka.Properties) != 0 {
		t.Fatalf("without the catalog's key the gather read %v", f.Kafka.Properties)
	}

	p := set.DefaultProfile()
	fd := findRule(t, set.Evaluate(f, p), "replica-fetchers")
	if fd.Status != rules.Fail || fd.Severity != rules.Low || fd.Observed != "num.replica.fetchers=1 ("+conf+":1)" ||
		fd.Reason != "num.replica.fetchers=1 (want >= 2): one fetcher thread per source broker serialises replication" {
		t.Fatalf("finding %+v", fd)
	}
	if fd.Fix == nil || fd.Fix.KafkaProperties["num.replica.fetchers"] != "2" || !fd.Fix.Restart || len(fd.Fix.Sysctl) != 0 ||
		fd.Fix.BoundOf("num.replica.fetchers") != (rules.Bound{Dir: rules.AtLeast}) ||
		fd.Fix.Summary != "set num.replica.fetchers=2 in server.properties and restart the broker" {
		t.Fatalf("fix %+v", fd.Fix)
	}
	plan := remediate.PlanHost("h", f, []rules.Finding{fd}, remediate.Selector{Rules: []string{"replica-fetchers"}})
	if c := planned(plan, "num.replica.fetchers"); c == nil || c.Kind != remediate.KindKafkaProperty || c.From != "1" || c.To != "2" ||
		c.PersistPath != conf || !c.RestartRequired || !slices.Equal(c.Rules, []string{"replica-fetchers"}) {
		t.Fatalf("plan %+v", plan)
	}

	for _, tc := range []struct {
		name    string
		edit    func(k *facts.Kafka)
		status  rules.Status
		reason  string // substring
		observe string // substring
	}{
		{"unset: Kafka's default", func(k *facts.Kafka) { delete(k.Properties, "num.replica.fetchers") }, rules.Fail, "num.replica.fetchers=1 (want >= 2)", "unset (Kafka's default 1)"},
		{"at the target", func(k *facts.Kafka) { k.Properties["num.replica.fetchers"] = "4" }, rules.Pass, "num.replica.fetchers ≥ 2", "num.replica.fetchers=4"},
		{"the running broker's value first", func(k *facts.Kafka) {
			k.Running = map[string]facts.RunningConfig{"num.replica.fetchers": {Value: "3", Source: "STATIC_BROKER_CONFIG"}}
		}, rules.Pass, "≥ 2", "the running broker uses 3 (STATIC_BROKER_CONFIG)"},
		{"not an integer", func(k *facts.Kafka) { k.Properties["num.replica.fetchers"] = "two" }, rules.Unknown, `num.replica.fetchers="two" is not an integer`, ""},
		{"server.properties not read", func(k *facts.Kafka) { k.Properties, k.Config = nil, "" }, rules.Unknown, "server.properties not gathered", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *f
			k := *f.Kafka
			k.Properties = maps.Clone(f.Kafka.Properties)
			c.Kafka = &k
			tc.edit(&k)
			fd := findRule(t, set.Evaluate(&c, p), "replica-fetchers")
			if fd.Status != tc.status || !strings.Contains(fd.Reason, tc.reason) || !strings.Contains(fd.Observed, tc.observe) {
				t.Errorf("%s %q (observed %q), want %s %q", fd.Status, fd.Reason, fd.Observed, tc.status, tc.reason)
			}
		})
	}
	noBroker := *f
	noBroker.Kafka = nil
	if fd := findRule(t, set.Evaluate(&noBroker, p), "replica-fetchers"); fd.Status != rules.Skip {
		t.Errorf("a host without a broker: %s %q, want skip", fd.Status, fd.Reason)
	}
}

// gatherConfig runs the gather script on this machine (read-only) and
// assembles its output as a broker's: the kafka section says a broker
// listens (this machine may run none), the rest is what the script read.
func gatherConfig(t *testing.T, p gather.Params) *facts.Facts {
	t.Helper()
	p.Marker = gather.NewMarker()
	script, err := gather.Script(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "sh", "-s")
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gather script: %v", err)
	}
	secs, err := remote.Sections(out, p.Marker, "gather")
	if err != nil {
		t.Fatal(err)
	}
	secs[facts.SecKafka] = remote.Section{Name: facts.SecKafka, State: remote.StateOK, Body: "pid=42\nfound=listener\n"}
	f := gather.Assemble(secs, p.KafkaPort)
	if f.Kafka == nil {
		t.Fatalf("no broker assembled: %+v", f.Sections)
	}
	return f
}
