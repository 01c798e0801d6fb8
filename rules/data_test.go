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
	catalogFile: func(n string, d []byte) error { _, err := parseCatalog(n, d); return err },
	profileFile: func(n string, d []byte) error { _, err := parseProfile(n, d, Profile{}); return err },
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
			emb, err := shipped.ReadFile(p)
			if err != nil || string(emb) != string(data) {
				t.Fatalf("%s is not embedded as on disk (%v)", p, err)
			}
		})
	}
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

var wantIDs = []string{
	"kernel-synack-wscale", "syncookies-fired", "listen-overflows", "kafka-backlog-hardcoded",
	"kafka-backlog-config", "listen-backlog-effective", "reconnect-storm", "client-wscale-mismatch", "somaxconn", "syn-backlog", "tcp-timestamps",
	"window-scaling", "socket-buffers", "congestion-control", "sysctl-persisted", "nic-ring", "nic-offload", "nic-persisted",
}

var wantSeverity = map[string]Severity{
	"kernel-synack-wscale": Critical, "syncookies-fired": High, "listen-overflows": Medium,
	"kafka-backlog-hardcoded": High, "kafka-backlog-config": Medium, "listen-backlog-effective": High,
	"reconnect-storm": High, "client-wscale-mismatch": Critical,
	"somaxconn": Medium, "syn-backlog": Low, "tcp-timestamps": High, "window-scaling": High,
	"socket-buffers": Low, "congestion-control": Info, "sysctl-persisted": Medium, "nic-ring": Medium,
	"nic-offload": Medium, "nic-persisted": Medium,
}

func TestCatalogIDsAndOrder(t *testing.T) {
	var got []string
	for _, r := range Catalog() {
		got = append(got, r.ID)
		if r.Severity != wantSeverity[r.ID] {
			t.Errorf("%s: severity %s, DESIGN.md says %s", r.ID, r.Severity, wantSeverity[r.ID])
		}
		if len(r.Rationale) < 200 {
			t.Errorf("%s: rationale is %d characters; explain why it matters", r.ID, len(r.Rationale))
		}
	}
	if !reflect.DeepEqual(got, wantIDs) {
		t.Fatalf("catalog IDs\n got %v\nwant %v", got, wantIDs)
	}
}

func TestCatalogEvaluators(t *testing.T) {
	for _, r := range Catalog() {
		host, fleet := evaluators[r.ID] != nil, fleetEvaluators[r.ID] != nil
		if host == fleet || fleet != (r.Scope == ScopeFleet) {
			t.Errorf("catalog rule %s (scope %q): host evaluator %v, fleet evaluator %v", r.ID, r.Scope, host, fleet)
		}
	}
	for id := range evaluators {
		if _, ok := Lookup(id); !ok {
			t.Errorf("evaluator %s has no catalog entry", id)
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
	want := Profile{
		Somaxconn: 4096, TCPMaxSynBacklog: 8192, ListenBacklog: 4096,
		RmemMax: 134217728, WmemMax: 134217728, TCPRmemMax: 134217728, TCPWmemMax: 134217728,
		RmemDefault: 262144, WmemDefault: 262144, CongestionControl: "bbr", DefaultQdisc: "fq",
		NICRing: 4096, Offloads: []string{"tso", "gso", "gro"}, StormMargin: 25,
	}
	got := DefaultProfile()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultProfile\n got %+v\nwant %+v", got, want)
	}
	got.Offloads[0] = "lro"
	if DefaultProfile().Offloads[0] != "tso" {
		t.Fatal("DefaultProfile shares its Offloads slice")
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
	if p.Somaxconn != 65535 || p.CongestionControl != "cubic" || !reflect.DeepEqual(p.Offloads, []string{"gro"}) || p.TCPMaxSynBacklog != 8192 {
		t.Fatalf("overrides not applied on top of the default: %+v", p)
	}
	if p, err := LoadProfile(write("empty.yaml", "")); err != nil || !reflect.DeepEqual(p, DefaultProfile()) {
		t.Fatalf("empty profile: %+v %v", p, err)
	}
	bad := []struct{ name, body, want string }{
		{"unknown.yaml", "somaxconn: 4096\nsomaxcon: 1\n", "unknown.yaml:2: unknown profile key \"somaxcon\""},
		{"type.yaml", "\nsomaxconn: lots\n", "type.yaml:2: profile key \"somaxconn\": want a positive integer, got str \"lots\""},
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

func TestSysctlKeys(t *testing.T) {
	got := SysctlKeys()
	for _, want := range []string{
		"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_syncookies", "net.ipv4.tcp_timestamps",
		"net.ipv4.tcp_window_scaling", "net.core.rmem_default", "net.core.wmem_default", "net.core.rmem_max",
		"net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
		"net.core.default_qdisc", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout",
	} {
		found := false
		for _, k := range got {
			found = found || k == want
		}
		if !found {
			t.Errorf("SysctlKeys lacks %s", want)
		}
	}
	if len(got) != 15 {
		t.Errorf("SysctlKeys = %d keys %v, want 15", len(got), got)
	}
}
