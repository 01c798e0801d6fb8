package whatif

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/report/diff"
	"github.com/kaudit/kaudit/rules"
)

func host(name, group, release, kafkaVer, dist string, somaxconn, persistedSomaxconn string) report.Host {
	f := &facts.Facts{
		KafkaPort: 9092,
		Kernel:    facts.Kernel{Release: release, Version: "Linux version " + release + " #1 SMP Debian 4.19.152-1 (2020-10-18)", Distro: "debian", DistroVer: "10"},
		Sysctl: map[string]string{
			"net.core.somaxconn": somaxconn, "net.ipv4.tcp_syncookies": "1", "net.ipv4.tcp_max_syn_backlog": "8192",
			"net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_window_scaling": "1",
		},
		Persisted:   map[string]facts.PersistedSysctl{},
		Netstat:     map[string]map[string]int64{"TcpExt": {"SyncookiesSent": 0, "TCPReqQFullDoCookies": 0, "ListenOverflows": 0, "ListenDrops": 0, "TCPReqQFullDrop": 0}},
		Listeners:   []facts.Listener{{Addr: "*", Port: 9092, Backlog: 50}},
		Established: []facts.LocalConns{{Addr: "10.0.0.1", Port: 9092, Count: 40}},
		Kafka: &facts.Kafka{Version: kafkaVer, Distribution: dist, Config: "/etc/kafka/server.properties",
			Properties: map[string]string{"socket.listen.backlog.size": "8192", "socket.receive.buffer.bytes": "102400"}},
	}
	if persistedSomaxconn != "" {
		f.Persisted["net.core.somaxconn"] = facts.PersistedSysctl{Value: persistedSomaxconn, File: "/etc/sysctl.d/90-kafka.conf", Line: 1}
	}
	return report.Host{Name: name, Groups: []string{group}, Facts: f, Findings: rules.Evaluate(f, rules.DefaultProfile())}
}

func whatIfReport() *report.Report {
	r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{
		// Affected Debian kernel, Kafka 2.8.1, somaxconn 128 at runtime but 8192 persisted.
		host("east-1", "east", "4.19.0-12-amd64", "2.8.1", "apache", "128", "8192"),
		// Confluent 7.1 (Kafka 3.1), somaxconn 4096 at runtime, nothing persisted.
		host("west-1", "west", "4.19.0-12-amd64", "7.1.0", "confluent", "4096", ""),
		{Name: "west-down", Groups: []string{"west"}, Error: &report.HostError{Kind: "timeout"}, Findings: []rules.Finding{}},
	}}
	report.Summarize(r)
	return r
}

func statusOf(t *testing.T, r *report.Report, host, rule string) rules.Status {
	t.Helper()
	f, ok := r.Finding(host, rule)
	if !ok {
		t.Fatalf("no %s on %s", rule, host)
	}
	return f.Status
}

func TestWhatIfUpgrade(t *testing.T) {
	r := whatIfReport()
	before, _ := json.Marshal(r)
	// Preconditions: the fixture fails the way the test needs.
	for _, c := range []struct{ host, rule string }{{"east-1", "kernel-synack-wscale"}, {"east-1", "kafka-backlog-hardcoded"}, {"east-1", "listen-backlog-effective"}, {"west-1", "kafka-backlog-hardcoded"}} {
		if st := statusOf(t, r, c.host, c.rule); st != rules.Fail {
			t.Fatalf("fixture: %s on %s is %s, want fail", c.rule, c.host, st)
		}
	}

	w, err := Evaluate(r, Assume{Kernel: "6.1.0", Kafka: "3.6.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
		t.Error("EvaluateWhatIf modified the report it was given")
	}
	a := w.After
	want := map[string]rules.Status{
		"east-1/kernel-synack-wscale":     rules.Pass, // 6.1 has 909172a
		"east-1/kafka-backlog-hardcoded":  rules.Pass, // 3.6.1 ≥ 3.2
		"east-1/listen-backlog-effective": rules.Pass, // restart: min(8192, persisted somaxconn 8192) ≥ 4096
		"west-1/kernel-synack-wscale":     rules.Pass,
		"west-1/kafka-backlog-hardcoded":  rules.Fail, // Confluent keeps 7.1.0: no confluent version assumed
		"west-1/listen-backlog-effective": rules.Fail, // still the hard-coded 50
	}
	for k, st := range want {
		hr := strings.SplitN(k, "/", 2)
		if got := statusOf(t, a, hr[0], hr[1]); got != st {
			t.Errorf("after: %s %s, want %s", k, got, st)
		}
	}
	fixes := keys(w.Fixes)
	for _, k := range []string{"east-1/kernel-synack-wscale:fail>pass", "east-1/kafka-backlog-hardcoded:fail>pass", "east-1/listen-backlog-effective:fail>pass", "east-1/somaxconn:fail>pass"} {
		if !contains(fixes, k) {
			t.Errorf("fixes lack %s: %q", k, fixes)
		}
	}
	if !contains(keys(w.StillFailing), "west-1/kafka-backlog-hardcoded:fail>fail") {
		t.Errorf("still failing %q", keys(w.StillFailing))
	}
	var facts []string
	for _, f := range w.Facts {
		facts = append(facts, f.Host+" "+f.Fact+" "+f.Old+">"+f.New)
	}
	for _, k := range []string{"east-1 kernel.release 4.19.0-12-amd64>6.1.0", "east-1 kafka.version 2.8.1>3.6.1", "east-1 sysctl.net.core.somaxconn 128>8192", "east-1 listener *:9092 backlog 50>8192"} {
		if !contains(facts, k) {
			t.Errorf("facts lack %q: %q", k, facts)
		}
	}
	if len(w.Clusters) != 2 {
		t.Fatalf("clusters %+v", w.Clusters)
	}
	east, west := w.Clusters[0], w.Clusters[1]
	if east.Cluster != "east" || east.SafeNow || !east.SafeAfter || len(east.BlockersAfter) != 0 {
		t.Errorf("east %+v", east)
	}
	if west.Cluster != "west" || west.SafeNow || west.SafeAfter || !contains(west.BlockersAfter, "west-down: not audited (timeout)") || !contains(west.BlockersAfter, "west-1: kafka-backlog-hardcoded fail") {
		t.Errorf("west %+v", west)
	}

	// Both distributions upgraded: west is safe too, except for the host that could not be audited.
	w, err = Evaluate(r, Assume{Kafka: "3.6.1, confluent:7.6.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := statusOf(t, w.After, "west-1", "kafka-backlog-hardcoded"); got != rules.Pass {
		t.Errorf("confluent 7.6.0: %s", got)
	}
	if got := statusOf(t, w.After, "east-1", "kernel-synack-wscale"); got != rules.Fail {
		t.Errorf("kernel not assumed, yet kernel-synack-wscale %s", got)
	}
}

func TestWhatIfIntroduces(t *testing.T) {
	// Runtime somaxconn 4096 but 128 persisted: the reboot of a kernel upgrade loses it.
	r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{host("k", "c", "4.19.0-12-amd64", "3.6.1", "apache", "4096", "128")}}
	report.Summarize(r)
	if st := statusOf(t, r, "k", "somaxconn"); st != rules.Pass {
		t.Fatalf("fixture: somaxconn %s", st)
	}
	w, err := Evaluate(r, Assume{Kernel: "5.15.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(w.Introduces); !contains(got, "k/somaxconn:pass>fail") {
		t.Errorf("introduces %q", got)
	}
	var b bytes.Buffer
	if err := Write(&b, "table", w); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"What if: kernel 5.15.0", "The upgrade would introduce (", "somaxconn  medium    pass → fail", "Safe to rolling-restart?", "NOT SAFE"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, "json", w); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Introduces) != len(w.Introduces) || len(back.Clusters) != 1 {
		t.Errorf("json: %v %+v", err, back)
	}
}

func TestWhatIfBadAssumptions(t *testing.T) {
	r := whatIfReport()
	for _, a := range []Assume{{Kernel: "latest"}, {Kernel: "6.1 rc"}, {Kernel: "6" + strings.Repeat("1", 128)}, {Kafka: "3"}, {Kafka: "kafka:3.6.1"}, {Kafka: "3.x"}, {Kafka: "3.6.1,3.7.0"}, {Kafka: "3.-6.1"}, {Kafka: "+3.6"}, {Kafka: "3.6.1,"}} {
		if _, err := Evaluate(r, a, nil); err == nil {
			t.Errorf("%+v accepted", a)
		}
	}
	m, err := ParseAssumeKafka("3.6.1,confluent:7.6.0")
	if err != nil || m["apache"] != "3.6.1" || m["confluent"] != "7.6.0" {
		t.Errorf("%v %v", m, err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Upgrades planned per host (the inventory), with a flag winning over them.
func TestWhatIfPerHostPlan(t *testing.T) {
	r := whatIfReport()
	r.Hosts = append(r.Hosts, host("east-2", "east", "4.19.0-12-amd64", "2.8.1", "apache", "128", "8192"))
	report.Summarize(r)
	before, _ := json.Marshal(r)
	inv := map[string]Assume{
		"east-1": {Kernel: "6.1.0", Kafka: "3.6.1"},
		"west-1": {Kafka: "confluent:7.6.0"},
		// east-2 and west-down: nothing planned
	}
	w, err := EvaluatePlan(r, Assume{}, func(h string) Assume { return inv[h] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(r); !bytes.Equal(before, after) {
		t.Error("EvaluatePlan modified the report it was given")
	}
	if !w.PerHost || w.Assume != (Assume{}) || len(w.Plans) != 2 || !equal(w.NoUpgrade, []string{"west-down", "east-2"}) {
		t.Fatalf("plans %+v, no upgrade %q, per host %v", w.Plans, w.NoUpgrade, w.PerHost)
	}
	if p := w.Plans[0]; p != (HostPlan{Host: "east-1", Kernel: "6.1.0", Kafka: "3.6.1", KernelFrom: "inventory", KafkaFrom: "inventory"}) {
		t.Errorf("plan %+v", p)
	}
	for _, k := range []string{"east-1/kernel-synack-wscale:fail>pass", "east-1/kafka-backlog-hardcoded:fail>pass", "west-1/kafka-backlog-hardcoded:fail>pass"} {
		if !contains(keys(w.Fixes), k) {
			t.Errorf("fixes lack %s: %q", k, keys(w.Fixes))
		}
	}
	// east-2 is identical to east-1 but plans nothing: kept as it is.
	for _, cs := range [][]diff.Change{w.Fixes, w.Introduces, w.StillFailing, w.Other} {
		for _, c := range cs {
			if c.Host == "east-2" {
				t.Errorf("east-2 has no upgrade planned, yet %+v", c)
			}
		}
	}
	for _, f := range w.Facts {
		if f.Host == "east-2" {
			t.Errorf("east-2 facts modelled: %+v", f)
		}
	}
	if got := statusOf(t, w.After, "east-2", "kernel-synack-wscale"); got != rules.Fail {
		t.Errorf("east-2 after: %s", got)
	}
	east := w.Clusters[0]
	if east.Cluster != "east" || east.SafeAfter || !contains(east.BlockersAfter, "east-2: kernel-synack-wscale fail (no upgrade planned)") || len(east.Hosts) != 2 {
		t.Errorf("east %+v", east)
	}
	var b bytes.Buffer
	if err := Write(&b, "table", w); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"What if: upgrades planned per host (2 planned, 2 without)",
		"· kernel 6.1.0 (inventory), Kafka 3.6.1 (inventory) on east-1\n",
		"· Kafka confluent:7.6.0 (inventory) on west-1\n",
		"· no upgrade planned on west-down, east-2:",
		"east-2: kernel-synack-wscale fail (no upgrade planned)",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, "json", w); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || !back.PerHost || len(back.Plans) != 2 || len(back.NoUpgrade) != 2 {
		t.Errorf("json: %v %+v", err, back)
	}

	// --assume-kernel wins over east-1's kernel and plans one for every host;
	// the inventory's Kafka versions still apply.
	w, err = EvaluatePlan(r, Assume{Kernel: "5.15.0"}, func(h string) Assume { return inv[h] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.NoUpgrade) != 0 || len(w.Plans) != 4 || w.Plans[0] != (HostPlan{Host: "east-1", Kernel: "5.15.0", Kafka: "3.6.1", KernelFrom: "--assume-kernel", KafkaFrom: "inventory"}) ||
		w.Plans[3] != (HostPlan{Host: "east-2", Kernel: "5.15.0", KernelFrom: "--assume-kernel"}) {
		t.Errorf("plans %+v, no upgrade %q", w.Plans, w.NoUpgrade)
	}
	for _, f := range w.Facts {
		if f.Host == "east-1" && f.Fact == "kernel.release" && f.New != "5.15.0" {
			t.Errorf("east-1 kernel %+v", f)
		}
	}
	// The same plan everywhere (flags only) is the fleet-wide what-if.
	w, err = EvaluatePlan(r, Assume{Kernel: "6.1.0", Kafka: "3.6.1"}, func(h string) Assume { return inv[h] }, nil)
	if err != nil || w.PerHost || w.Assume != (Assume{Kernel: "6.1.0", Kafka: "3.6.1"}) || !strings.HasPrefix(w.Assumptions[0], "kernel 6.1.0 on every audited host") {
		t.Errorf("%v %+v", err, w)
	}

	// Inventory values are checked again, naming the host.
	for _, bad := range []Assume{{Kernel: "latest"}, {Kafka: "3"}} {
		_, err := EvaluatePlan(r, Assume{}, func(h string) Assume {
			if h == "west-1" {
				return bad
			}
			return Assume{}
		}, nil)
		if err == nil || !strings.Contains(err.Error(), "host west-1: assume_k") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func keys(cs []diff.Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Host+"/"+c.Rule+":"+string(c.OldStatus)+">"+string(c.NewStatus))
	}
	return out
}

// TestWhatIfConfluentBackport: a patch upgrade within CP 7.1 to 7.1.7 (with
// socket.listen.backlog.size backported, confluentinc/kafka tag v7.1.7) is enough: the what-if
// passes kafka-backlog-hardcoded, checks the property (8192 here),
// re-listens with min(8192, somaxconn 4096), which holds the 1,840 clients
// (reconnect-storm), and calls the cluster safe to rolling-restart; 7.1.6
// is not.
func TestWhatIfConfluentBackport(t *testing.T) {
	for _, c := range []struct {
		to   string
		want rules.Status
	}{{"7.1.7", rules.Pass}, {"7.1.6", rules.Fail}} {
		h := host("w", "west", "6.1.0-13-amd64", "7.1.5", "confluent", "4096", "4096")
		h.Facts.Established[0].Count = 1840 // a storm for the hard-coded 50, not for min(8192, 4096)
		h.Findings = rules.Evaluate(h.Facts, rules.DefaultProfile())
		r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{h}}
		report.Summarize(r)
		if got := statusOf(t, r, "w", rules.RuleReconnectStorm); got != rules.Fail {
			t.Fatalf("fixture: reconnect-storm %s", got)
		}
		w, err := Evaluate(r, Assume{Kafka: "confluent:" + c.to}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range []string{rules.RuleKafkaBacklogHardcoded, rules.RuleListenBacklogEffective, rules.RuleReconnectStorm} {
			if got := statusOf(t, w.After, "w", rule); got != c.want {
				t.Errorf("CP %s: %s %s, want %s", c.to, rule, got, c.want)
			}
		}
		if safe := w.Clusters[0].SafeAfter; safe != (c.want == rules.Pass) {
			t.Errorf("CP %s: safe to rolling-restart after: %v %v", c.to, safe, w.Clusters[0].BlockersAfter)
		}
		cfg := statusOf(t, w.After, "w", rules.RuleKafkaBacklogConfig)
		if (c.want == rules.Pass) != (cfg == rules.Pass) {
			t.Errorf("CP %s: kafka-backlog-config %s", c.to, cfg)
		}
	}
}

// A producer host (client profile) is no broker: it is in no
// rolling-restart verdict, even in a group of its own.
func TestRestartVerdictSkipsClientHosts(t *testing.T) {
	b := host("b", "kafka", "6.1.0-13-amd64", "3.6.1", "apache", "4096", "4096")
	c := report.Host{Name: "p", Groups: []string{"clients"}, Facts: &facts.Facts{Role: facts.RoleClient, Conns: []facts.Conn{}}}
	c.Findings = rules.Evaluate(c.Facts, rules.DefaultProfile())
	r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{b, c}}
	report.Summarize(r)
	w, err := Evaluate(r, Assume{Kafka: "3.7.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Clusters) != 1 || w.Clusters[0].Cluster != "kafka" {
		t.Fatalf("clusters %+v", w.Clusters)
	}
}

// A report whose facts were spooled (pipeline's JSON scan) has no facts
// to model: the what-if refuses it instead of treating every host as
// unaudited.
func TestWhatIfRefusesSpooledFacts(t *testing.T) {
	r := whatIfReport()
	if _, err := Evaluate(r, Assume{Kernel: "6.1.0"}, nil); err != nil {
		t.Fatalf("held facts: %v", err)
	}
	sp, err := report.NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if r.Hosts[0].Spooled, err = sp.Put(r.Hosts[0].Facts); err != nil {
		t.Fatal(err)
	}
	r.Hosts[0].Facts = nil
	if _, err := Evaluate(r, Assume{Kernel: "6.1.0"}, nil); err == nil || !strings.Contains(err.Error(), "spooled") {
		t.Errorf("spooled facts: %v", err)
	}
}

// The restart verdict groups brokers by the Kafka cluster they are proven
// to be in (scan --bootstrap), else by their meta.properties' cluster.id,
// else by inventory group; a broker of the cluster that no audited host
// is blocks that cluster's verdict.
func TestRestartVerdictByClusterID(t *testing.T) {
	a := host("a", "east", "6.1.0-13-amd64", "3.6.1", "apache", "4096", "4096")
	b := host("b", "west", "6.1.0-13-amd64", "3.6.1", "apache", "4096", "4096")
	m := host("m", "west", "6.1.0-13-amd64", "3.6.1", "apache", "4096", "4096")
	m.Facts.Kafka.LogDirs = []facts.LogDir{{Path: "/d", Meta: &facts.MetaProperties{ClusterID: "Meta1", NodeID: 3}}}
	g := host("g", "west", "6.1.0-13-amd64", "3.6.1", "apache", "4096", "4096")
	r := &report.Report{SchemaVersion: 1, Hosts: []report.Host{a, b, m, g}, Cluster: &report.Cluster{ID: "Xy3", Brokers: []report.ClusterBroker{
		{NodeID: 1, Host: "a", Proof: "proven"}, {NodeID: 2, Host: "b", Proof: "proven"}, {NodeID: 7, Advertised: "kafka-7:9092"},
		{NodeID: 8, Advertised: "kafka-8:9092", Host: "kafka-8", By: "name", Proof: facts.ProofLeftOut}}}}
	report.Summarize(r)
	w, err := Evaluate(r, Assume{Kafka: "3.7.0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, v := range w.Clusters {
		got[v.Cluster] = v.Hosts
	}
	want := map[string][]string{"cluster Xy3": {"a", "b"}, "cluster Meta1": {"m"}, "west": {"g"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("clusters %v, want %v", got, want)
	}
	for _, v := range w.Clusters {
		if v.Cluster != "cluster Xy3" {
			continue
		}
		if v.SafeNow || v.SafeAfter || !slices.Contains(v.BlockersNow, "broker 7 (kafka-7:9092): in no inventory, not audited") {
			t.Errorf("an unaudited broker does not block: %+v", v)
		}
		if !slices.Contains(v.BlockersNow, "broker 8 (kafka-8:9092): host kafka-8, left out of this run (--limit), not audited") {
			t.Errorf("a broker left out by --limit does not block: %+v", v.BlockersNow)
		}
	}
}
