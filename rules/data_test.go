package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// loaders maps every shipped YAML file to its strict loader. A new file
// without a loader fails TestShippedYAML.
var loaders = map[string]func(name string, data []byte) error{
	catalogFile: func(n string, d []byte) error { _, err := parseCatalog(n, d, newKeyTable()); return err },
	profileFile: func(n string, d []byte) error {
		_, err := parseProfile(n, d, Profile{keys: shipped.keys}, true)
		return err
	},
	kernelsFile: func(n string, d []byte) error { _, err := parseKernels(n, d); return err },
	confluentFile: func(n string, d []byte) error {
		_, err := parseConfluent(n, d)
		return err
	},
}

// TestShippedYAML walks every YAML file in the package directory and loads
// it strictly (kube-bench's TestYamlFiles): a typo fails CI, not a user.
func TestShippedYAML(t *testing.T) {
	paths, err := filepath.Glob("*.y*ml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(loaders) {
		t.Errorf("found %d YAML files %v, have loaders for %d", len(paths), paths, len(loaders))
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			load, ok := loaders[p]
			if !ok {
				t.Fatalf("%s has no strict loader in the tests", p)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := load(p, data); err != nil {
				t.Fatalf("strict load: %v", err)
			}
			emb, err := shippedFS.ReadFile(p)
			if err != nil || string(emb) != string(data) {
				t.Fatalf("%s is not embedded as on disk (%v)", p, err)
			}
		})
	}
}

// checkRule is a one-rule catalog whose check has the item given.
func checkRule(item string) string {
	return "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f, check: {why: w, sysctls: [" + item + "]}}\n"
}

func propertyRule(item string) string {
	return "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f, check: {why: w, properties: [" + item + "]}}\n"
}

func mountRule(item string) string {
	return "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f, check: {why: w, mounts: [" + item + "]}}\n"
}

func limitRule(item string) string {
	return "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f, check: {why: w, limits: [" + item + "]}}\n"
}

func TestStrictLoadersRejectTypos(t *testing.T) {
	cases := []struct {
		name, file, data, want string
	}{
		{"catalog unknown field", catalogFile, "rules:\n  - id: x\n    titel: y\n", "titel"},
		{"catalog bad severity", catalogFile, "rules:\n  - id: x\n    title: t\n    severity: urgent\n    rationale: r\n    references: [{title: a, url: 'https://a'}]\n    fix: f\n", "urgent"},
		{"catalog unknown threshold", catalogFile, "rules:\n  - id: x\n    title: t\n    severity: low\n    rationale: r\n    references: [{title: a, url: 'https://a'}]\n    thresholds: [somaxcon]\n    fix: f\n", "somaxcon"},
		{"catalog duplicate id", catalogFile, "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f}\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f}\n", "duplicate"},
		{"kernels unknown field", kernelsFile, "commit: 909172a149749242990a6e64cb55d55460d4e417\ntitle: t\nmainline: '5.10'\noldest_fixed_series: '4.4'\nstable:\n  - {series: '5.4', first_fixed: '5.4.78', note: x}\n", "note"},
		{"kernels wrong series", kernelsFile, "commit: 909172a149749242990a6e64cb55d55460d4e417\ntitle: t\nmainline: '5.10'\noldest_fixed_series: '4.4'\nstable:\n  - {series: '5.4', first_fixed: '5.9.9'}\n", "5.9.9"},
		{"confluent unknown field", confluentFile, "mappings:\n  - {cp: '7.2', ak: '3.2', confirmed: true, verified: true}\n", "verified"},
		{"confluent not monotonic", confluentFile, "mappings:\n  - {cp: '7.2', ak: '3.2', confirmed: true}\n  - {cp: '7.3', ak: '3.1', confirmed: true}\n", "non-decreasing"},
		{"profile missing key", profileFile, "somaxconn: 4096\n", "missing profile key"},
		{"check unknown op", catalogFile, checkRule("{sysctl: vm.swappiness, op: below, value: '1', boot_default: {value: '60'}}"), `op "below" is not one of at-least, at-most, equal, one-of`},
		{"check unknown field", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, value: '1', feild: 2}"), "feild"},
		{"check two targets", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, value: '1', profile: swappiness, boot_default: {value: '60'}}"), "exactly one of profile, value, values"},
		{"check non-integer bound", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, value: low, boot_default: {value: '60'}}"), "needs an integer value"},
		{"check bad key", catalogFile, checkRule("{sysctl: 'vm.swappiness;id', op: at-most, value: '1', boot_default: {value: '60'}}"), "not a dotted sysctl key"},
		{"check static key of the wrong kind", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, profile: offloads, boot_default: {value: '60'}}"), `profile key "offloads" is a list of strings`},
		{"check without boot default", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, value: '1'}"), "boot_default: give the value the kernel boots with"},
		{"check boot default out of order", catalogFile, checkRule("{sysctl: vm.swappiness, op: at-most, value: '1', boot_default: {value: '1', before: [{kernel: '5.4', value: '2'}, {kernel: '4.4', value: '3'}]}}"), "in rising order"},
		{"property without default", catalogFile, propertyRule("{property: num.io.threads, op: at-least, value: '8'}"), "give default, the value Kafka runs with"},
		{"property that may hold a secret", catalogFile, propertyRule("{property: ssl.keystore.password, op: equal, value: x, default: x}"), "may hold a secret"},
		{"property bad name", catalogFile, propertyRule("{property: 'num.io.threads|.*', op: at-least, value: '8', default: '8'}"), "is not a Kafka property name"},
		{"property unknown op", catalogFile, propertyRule("{property: num.io.threads, op: above, value: '8', default: '8'}"), `op "above" is not one of`},
		{"property non-integer bound", catalogFile, propertyRule("{property: num.io.threads, op: at-least, value: many, default: '8'}"), "needs an integer value"},
		{"property with a boot default", catalogFile, propertyRule("{property: num.io.threads, op: at-least, value: '8', default: '8', boot_default: {value: '1'}}"), "boot_default"},
		{"limit not in the closed set", catalogFile, limitRule("{limit: max-processes, op: at-least, value: '8'}"), `limit "max-processes" is not one of open-files`},
		{"limit with equal", catalogFile, limitRule("{limit: open-files, op: equal, value: '8'}"), "a limit takes at-least or at-most"},
		{"limit with a field", catalogFile, limitRule("{limit: open-files, op: at-least, value: '8', field: 2}"), "a limit has no fields"},
		{"mount option bad name", catalogFile, mountRule("{mount_option: 'commit,ro', op: at-most, value: '5', default: '5'}"), "is not a mount option name"},
		{"mount option without default", catalogFile, mountRule("{mount_option: commit, op: at-most, value: '5'}"), "give default"},
		{"check without why", catalogFile, "rules:\n  - {id: x, title: t, severity: low, rationale: r, references: [{title: a, url: 'https://a'}], fix: f, check: {sysctls: [{sysctl: vm.swappiness, op: at-most, value: '1'}]}}\n", "needs sysctls, properties, limits or mounts, and why"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := loaders[c.file](c.file, []byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// TestCatalogRules: every rule explains itself, and every rule ID the Go
// code names is in the catalog. The list of rules, their order and their
// severities are the catalog's alone (docs/rules.md's table is checked
// against it: TestReadmeRuleTable).
func TestCatalogRules(t *testing.T) {
	for _, r := range Catalog() {
		if len(r.Rationale) < 200 {
			t.Errorf("%s: rationale is %d characters; explain why it matters", r.ID, len(r.Rationale))
		}
	}
	for _, id := range []string{RuleKernelSynackWscale, RuleSyncookiesFired, RuleListenOverflows, RuleKafkaBacklogHardcoded,
		RuleKafkaBacklogConfig, RuleListenBacklogEffective, RuleSysctlPersisted, RuleReconnectStorm, RuleClientWscaleMismatch} {
		if _, ok := Lookup(id); !ok {
			t.Errorf("rule %s, named in Go, is not in the catalog", id)
		}
	}
	if Catalog()[0].ID != RuleKernelSynackWscale {
		t.Errorf("the catalog starts with %s: the report opens with the kernel bug", Catalog()[0].ID)
	}
}

func TestCatalogEvaluators(t *testing.T) {
	for _, r := range Catalog() {
		if r.Scope == ScopeCluster {
			continue // judged by discover.Map (TestClusterRulesHaveAKind there)
		}
		host, fleet := evaluatorFor(r) != nil, fleetEvaluators[r.ID] != nil
		if host == fleet || fleet != (r.Scope == ScopeFleet) {
			t.Errorf("catalog rule %s (scope %q): host evaluator %v, fleet evaluator %v", r.ID, r.Scope, host, fleet)
		}
	}
	for id := range evaluators {
		if _, ok := Lookup(id); !ok {
			t.Errorf("evaluator %s has no catalog entry", id)
		}
	}
	// The plain threshold rules have no Go: the catalog's check is all.
	for _, id := range []string{"somaxconn", "window-scaling", "socket-buffers", "vm-swappiness", "netdev-max-backlog", "tcp-tw-reuse"} {
		if r, _ := Lookup(id); r.Check == nil || evaluators[id] != nil {
			t.Errorf("%s: want a catalog check and no Go evaluator", id)
		}
	}
	for id := range fleetEvaluators {
		if _, ok := Lookup(id); !ok {
			t.Errorf("fleet evaluator %s has no catalog entry", id)
		}
	}
}

func TestCatalogReferences(t *testing.T) {
	r, _ := Lookup("kernel-synack-wscale")
	var urls []string
	for _, ref := range r.References {
		urls = append(urls, ref.URL)
	}
	all := strings.Join(urls, " ")
	for _, want := range []string{"909172a149749242990a6e64cb55d55460d4e417", "speakerdeck.com/line_developers/mysterious-producer-slowdown"} {
		if !strings.Contains(all, want) {
			t.Errorf("kernel-synack-wscale references lack %s", want)
		}
	}
	r, _ = Lookup("kafka-backlog-hardcoded")
	all = ""
	for _, ref := range r.References {
		all += ref.URL + " "
	}
	for _, want := range []string{"KIP-764", "KAFKA-9648"} {
		if !strings.Contains(all, want) {
			t.Errorf("kafka-backlog-hardcoded references lack %s", want)
		}
	}
}

func TestEveryProfileKeyIsUsed(t *testing.T) {
	used := map[string]bool{}
	for _, r := range Catalog() {
		for _, k := range r.Thresholds {
			used[k] = true
		}
	}
	for _, k := range ProfileKeys() {
		if !used[k] {
			t.Errorf("profile key %s is not listed as a threshold by any rule", k)
		}
	}
}

func TestCatalogIsACopy(t *testing.T) {
	c := Catalog()
	c[0].ID = "changed"
	c[0].References[0].Title = "changed"
	if r, _ := Lookup("kernel-synack-wscale"); r.References[0].Title == "changed" {
		t.Fatal("Catalog exposes internal state")
	}
	if Catalog()[0].ID != "kernel-synack-wscale" {
		t.Fatal("Catalog exposes internal state")
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup found an unknown rule")
	}
}

func TestDefaultProfile(t *testing.T) {
	got := DefaultProfile()
	want := map[string]any{
		"somaxconn": 4096, "tcp_max_syn_backlog": 8192, "listen_backlog": 4096,
		"rmem_max": 134217728, "wmem_max": 134217728, "tcp_rmem_max": 134217728, "tcp_wmem_max": 134217728,
		"rmem_default": 262144, "wmem_default": 262144, "congestion_control": "bbr", "default_qdisc": "fq",
		"nic_ring": 4096, "offloads": []string{"tso", "gso", "gro"}, "storm_margin": 25,
	}
	// Every key has a value: the static ones and those the catalog's
	// checks declare (a new check's key needs only its default in the file).
	for _, k := range ProfileKeys() {
		if got.Value(k) == nil {
			t.Errorf("profile key %s has no default", k)
		}
	}
	for k, v := range want {
		if !reflect.DeepEqual(got.Value(k), v) {
			t.Errorf("DefaultProfile %s = %v, want %v", k, got.Value(k), v)
		}
	}
	if got.Somaxconn != 4096 || got.ListenBacklog != 4096 || got.StormMargin != 25 {
		t.Errorf("DefaultProfile fields %+v", got)
	}
	got.Offloads[0] = "lro"
	if DefaultProfile().Offloads[0] != "tso" {
		t.Fatal("DefaultProfile shares its Offloads slice")
	}
	if _, err := got.With(map[string]any{"rmem_max": -1}); err == nil {
		t.Error("a negative target for a check's key was accepted")
	}
	if z, err := got.With(map[string]any{"tcp_max_syn_backlog": 0}); err != nil || z.Value("tcp_max_syn_backlog") != 0 {
		t.Errorf("a check's key takes 0 (vm.swappiness at most 0): %v", err)
	}
	if _, err := got.With(map[string]any{"somaxconn": 0}); err == nil {
		t.Error("somaxconn 0 was accepted")
	}
	changed, err := got.With(map[string]any{"rmem_max": 1})
	if err != nil || changed.Value("rmem_max") != 1 || got.Value("rmem_max") != 134217728 || DefaultProfile().Value("rmem_max") != 134217728 {
		t.Fatalf("With on a check's key: %v, %v, %v", err, changed.Value("rmem_max"), got.Value("rmem_max"))
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, err := LoadProfile(write("ok.yaml", "# mine\nsomaxconn: 65535\noffloads: [gro]\ncongestion_control: cubic\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Somaxconn != 65535 || p.CongestionControl != "cubic" || !reflect.DeepEqual(p.Offloads, []string{"gro"}) || p.Value("tcp_max_syn_backlog") != 8192 {
		t.Fatalf("overrides not applied on top of the default: %+v", p)
	}
	if p, err := LoadProfile(write("empty.yaml", "")); err != nil || !reflect.DeepEqual(p, DefaultProfile()) {
		t.Fatalf("empty profile: %+v %v", p, err)
	}
	bad := []struct{ name, body, want string }{
		{"unknown.yaml", "somaxconn: 4096\nsomaxcon: 1\n", "unknown.yaml:2: unknown profile key \"somaxcon\""},
		{"type.yaml", "\nsomaxconn: lots\n", "type.yaml:2: profile key \"somaxconn\": want a positive integer, got the string \"lots\""},
		{"neg.yaml", "nic_ring: -1\n", "neg.yaml:1: profile key \"nic_ring\""},
		{"list.yaml", "offloads: gro\n", "list.yaml:1: profile key \"offloads\": want a list of strings"},
		{"str.yaml", "default_qdisc: 3\n", "str.yaml:1: profile key \"default_qdisc\": want a string"},
		{"dup.yaml", "somaxconn: 1\nsomaxconn: 2\n", "dup.yaml:2: profile key \"somaxconn\" set twice (first at line 1)"},
		{"list2.yaml", "- somaxconn\n", "list2.yaml:1: a profile is a mapping"},
		{"syntax.yaml", "somaxconn: [\n", "syntax.yaml"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := LoadProfile(write(b.name, b.body))
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("err = %v, want %q", err, b.want)
			}
		})
	}
	if _, err := LoadProfile(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("missing file: no error")
	}
}

func TestProfileWith(t *testing.T) {
	base := DefaultProfile()
	p, err := base.With(map[string]any{"somaxconn": 8192, "nic_ring": "2048", "listen_backlog": float64(1024), "offloads": []any{"tso", "gro"}, "default_qdisc": "fq_codel"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Somaxconn != 8192 || p.NICRing != 2048 || p.ListenBacklog != 1024 || p.DefaultQdisc != "fq_codel" || !reflect.DeepEqual(p.Offloads, []string{"tso", "gro"}) {
		t.Fatalf("With: %+v", p)
	}
	if base.Somaxconn != 4096 {
		t.Fatal("With changed its receiver")
	}
	for _, bad := range []map[string]any{
		{"somaxcon": 1},
		{"somaxconn": "many"},
		{"somaxconn": 1.5},
		{"somaxconn": 0},
		{"offloads": "gro"},
		{"offloads": []any{1}},
		{"congestion_control": 5},
	} {
		if _, err := base.With(bad); err == nil {
			t.Errorf("With(%v): no error", bad)
		} else if !strings.Contains(err.Error(), "profile override") {
			t.Errorf("With(%v): error %q does not name the override", bad, err)
		}
	}
}

// TestSysctlKeys: the gatherer reads every key a catalog check names, the
// keys the Go rules read, and the two the guide names that no rule judges.
func TestSysctlKeys(t *testing.T) {
	got := map[string]bool{}
	for _, k := range SysctlKeys() {
		got[k] = true
	}
	want := []string{KeySyncookies, KeySomaxconn, KeySynBacklog, "vm.dirty_bytes", "vm.dirty_background_bytes", KeyMaxMapCount,
		KeyZoneReclaim, KeyNUMABalancing, KeyConntrackCount, KeyConntrackMax}
	for _, r := range Catalog() {
		if r.Check != nil {
			for _, c := range r.Check.Sysctls {
				want = append(want, c.Key)
			}
		}
	}
	for _, k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("SysctlKeys lacks %s", k)
		}
		got[k] = false
	}
	for k, unread := range got {
		if !unread {
			delete(got, k)
		}
	}
	if len(got) > 0 {
		t.Errorf("SysctlKeys has keys nothing reads: %v", sortedKeys(got))
	}
	if len(SysctlKeys()) < 15 {
		t.Errorf("SysctlKeys = %v: fewer than the 15 keys of the shipped rules", SysctlKeys())
	}
}
