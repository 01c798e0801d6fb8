package rules

import (
	"encoding/json"
	"testing"

	"github.com/kaudit/kaudit/audit/facts"
)

// TestBacklogConfigurable lists boundary versions of both distributions
// (moved from remediate, where the planner had its own copy).
func TestBacklogConfigurable(t *testing.T) {
	for _, tc := range []struct {
		version, dist string
		want          Answer
	}{
		{"2.8.1", "apache", AnswerNo},
		{"3.1.2", "apache", AnswerNo},
		{"3.1.99", "apache", AnswerNo},
		{"3.2.0", "apache", AnswerYes},
		{"3.2", "apache", AnswerYes},
		{"3.10.0", "apache", AnswerYes},
		{"4.0.0", "apache", AnswerYes},
		{"0.10.2.1", "apache", AnswerNo},
		{"5.5.1", "confluent", AnswerNo},   // AK 2.5
		{"6.2.0", "confluent", AnswerNo},   // AK 2.8
		{"6.1.10", "confluent", AnswerNo},  // before Confluent's KIP-764 backport
		{"6.1.11", "confluent", AnswerYes}, // the backport (confluentinc/kafka tag v6.1.11)
		{"7.1.3", "confluent", AnswerNo},   // AK 3.1
		{"7.1.7-ccs", "confluent", AnswerYes},
		{"7.2.0", "confluent", AnswerYes}, // AK 3.2
		{"7.2.0-ccs", "confluent", AnswerYes},
		{"7.9.0", "confluent", AnswerYes},
		{"8.0.0", "confluent", AnswerYes},
		{"3.2.0", "", AnswerUnknown}, // AK 3.2 or CP 3.2 (AK 0.10.2)? cannot tell
		{"2.8.1", "", AnswerNo},      // either reading: before 3.2
		{"7.5.0", "", AnswerYes},     // either reading: from 3.2
		{"", "apache", AnswerUnknown},
		{"garbage", "apache", AnswerUnknown},
	} {
		got, reason := BacklogConfigurable(&facts.Kafka{Version: tc.version, Distribution: tc.dist})
		if got != tc.want || reason == "" {
			t.Errorf("%s %s: got %v (%q), want %v", tc.dist, tc.version, got, reason, tc.want)
		}
	}
	if got, _ := BacklogConfigurable(nil); got != AnswerUnknown {
		t.Errorf("nil broker: %v, want unknown", got)
	}
}

// TestKIP764Backports checks the table shape for Confluent's backports:
// a kip764_from row settles its own line from that patch release on.
func TestKIP764Backports(t *testing.T) {
	tab, err := parseConfluent("test.yaml", []byte(`mappings:
  - {cp: "6.2", ak: "2.8", confirmed: true, kip764_from: "6.2.10"}
  - {cp: "7.1", ak: "3.1", confirmed: true, kip764_from: "7.1.7"}
  - {cp: "7.2", ak: "3.2", confirmed: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		want    Answer
	}{
		{"6.2.9", AnswerNo}, {"6.2.10", AnswerYes}, {"6.2.15-ccs", AnswerYes},
		{"7.1.6", AnswerNo}, {"7.1.7", AnswerYes}, {"7.2.0", AnswerYes}, {"7.0.9", AnswerNo},
	} {
		kv := tab.kafkaVersion(&facts.Kafka{Version: tc.version, Distribution: "confluent"})
		if kv.configurable != tc.want {
			t.Errorf("CP %s: %v, want %v (%s)", tc.version, kv.configurable, tc.want, kv.reason)
		}
	}
	for _, bad := range []string{`"7.2.7"`, `"7.1"`, `"7.1.x"`, `"07.1.7"`} {
		doc := "mappings:\n  - {cp: \"7.1\", ak: \"3.1\", confirmed: true, kip764_from: " + bad + "}\n"
		if _, err := parseConfluent("test.yaml", []byte(doc)); err == nil {
			t.Errorf("kip764_from %s accepted", bad)
		}
	}
}

func TestRequestedBacklog(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    *facts.Kafka
		want int
		ok   bool
	}{
		{"nil", nil, 0, false},
		{"old ignores the property", &facts.Kafka{Version: "2.8.1", Distribution: "apache", Properties: map[string]string{PropBacklog: "4096"}}, 50, true},
		{"new unset", &facts.Kafka{Version: "3.2.0", Distribution: "apache"}, 50, true},
		{"new set", &facts.Kafka{Version: "3.2.0", Distribution: "apache", Properties: map[string]string{PropBacklog: " 4096 "}}, 4096, true},
		{"new bad", &facts.Kafka{Version: "3.2.0", Distribution: "apache", Properties: map[string]string{PropBacklog: "lots"}}, 0, false},
		{"version unknown", &facts.Kafka{Distribution: "apache"}, 0, false},
		{"the running broker's word wins", &facts.Kafka{Version: "3.2.0", Distribution: "apache", Properties: map[string]string{PropBacklog: "4096"},
			Running: map[string]facts.RunningConfig{PropBacklog: {Value: "1024"}}}, 1024, true},
	} {
		n, ok := RequestedBacklog(tc.k)
		if n != tc.want || ok != tc.ok {
			t.Errorf("%s: %d,%v want %d,%v", tc.name, n, ok, tc.want, tc.ok)
		}
	}
}

func TestEffectiveBacklog(t *testing.T) {
	for _, tc := range []struct{ req, somax, want int }{{50, 4096, 50}, {4096, 128, 128}, {4096, 4096, 4096}, {8192, 4096, 4096}} {
		if got := EffectiveBacklog(tc.req, tc.somax); got != tc.want {
			t.Errorf("EffectiveBacklog(%d, %d) = %d, want %d", tc.req, tc.somax, got, tc.want)
		}
	}
}

func TestRestartGateRules(t *testing.T) {
	want := []string{RuleKernelSynackWscale, RuleSyncookiesFired, RuleKafkaBacklogHardcoded, RuleListenBacklogEffective, RuleReconnectStorm}
	got := RestartGateRules()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	got[0] = "changed"
	if RestartGateRules()[0] != RuleKernelSynackWscale {
		t.Fatal("RestartGateRules returns shared state")
	}
}

// TestDistroTable checks the kernel texts that come from kernels.yaml's
// distros rather than from literals.
func TestDistroTable(t *testing.T) {
	d, up, ok := distroFirstFixed("ubuntu", "5.4")
	if !ok || d.Release != "focal" || d.FirstFixed != "5.4.0-59.65" || up != "5.4.78" {
		t.Errorf("ubuntu 5.4: %+v %q %v", d, up, ok)
	}
	if _, _, ok := distroFirstFixed("ubuntu", "4.15"); ok {
		t.Error("bionic has no confirmed first fixed build")
	}
	if got := uekFixedTag(); got != "v5.4.78" {
		t.Errorf("uekFixedTag = %q", got)
	}
	if got := ubuntuFixedNote(); got != " (focal: fixed from 5.4.0-59.65, upstream 5.4.78)" {
		t.Errorf("ubuntuFixedNote = %q", got)
	}
	bad := "commit: 909172a149749242990a6e64cb55d55460d4e417\ntitle: t\nmainline: \"5.10\"\noldest_fixed_series: \"4.4\"\n" +
		"stable:\n  - {series: \"5.4\", first_fixed: \"5.4.78\"}\n" +
		"distros:\n  - {distro: ubuntu, release: jammy, kernel_series: \"5.15\", first_fixed: \"5.15.0-1.1\", confirmed: true, note: n}\n"
	if _, err := parseKernels("kernels.yaml", []byte(bad)); err == nil {
		t.Error("a distro first_fixed on a series without a stable fix was accepted")
	}
}

func TestSyncookiesOffWarranted(t *testing.T) {
	for _, tc := range []struct {
		findings []Finding
		ok       bool
		status   Status
	}{
		{nil, false, ""},
		{[]Finding{{Rule: "somaxconn", Status: Fail}}, false, ""},
		{[]Finding{{Rule: RuleKernelSynackWscale, Status: Fail}}, true, Fail},
		{[]Finding{{Rule: RuleKernelSynackWscale, Status: Unknown}}, true, Unknown},
		{[]Finding{{Rule: RuleKernelSynackWscale, Status: Warn}}, false, Warn},
		{[]Finding{{Rule: RuleKernelSynackWscale, Status: Pass}}, false, Pass},
	} {
		ok, st := SyncookiesOffWarranted(tc.findings)
		if ok != tc.ok || st != tc.status {
			t.Errorf("%+v: %v %q, want %v %q", tc.findings, ok, st, tc.ok, tc.status)
		}
	}
	if !ReachesBrokerOnRestart(KeySomaxconn) || ReachesBrokerOnRestart(KeySynBacklog) {
		t.Error("ReachesBrokerOnRestart: somaxconn only")
	}
}

// TestAlternativeJSON: an alternative is its text in JSON (reports keep
// their shape); the typed fields are for the planner only.
func TestAlternativeJSON(t *testing.T) {
	fx := Fix{Summary: "s", Alternatives: []Alternative{{Text: "socket.receive.buffer.bytes=-1 (restart)", KafkaProperties: map[string]string{PropRcvbuf: "-1"}, Offer: true}}, WhenUnknown: true}
	b, err := json.Marshal(fx)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"summary":"s","alternatives":["socket.receive.buffer.bytes=-1 (restart)"]}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var back Fix
	if err := json.Unmarshal(b, &back); err != nil || len(back.Alternatives) != 1 || back.Alternatives[0].Text != fx.Alternatives[0].Text || back.Alternatives[0].Offer {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestHostWideOnly(t *testing.T) {
	for key, want := range map[string]bool{
		"net.core.rmem_max": true, "net.core.wmem_max": true, "net.core.rmem_default": true, "net.core.wmem_default": true,
		"net.core.somaxconn": false, "net.ipv4.tcp_rmem": false, "net.ipv4.tcp_syncookies": false,
	} {
		if got := HostWideOnly(key); got != want {
			t.Errorf("HostWideOnly(%s) = %v, want %v", key, got, want)
		}
	}
}

func TestKernelWide(t *testing.T) {
	for key, want := range map[string]bool{
		"vm.swappiness": true, "vm.max_map_count": true, "vm.dirty_ratio": true, "fs.file-max": true, "kernel.pid_max": true,
		"net.core.somaxconn": false, "net.core.rmem_max": false, "net.ipv4.tcp_rmem": false,
	} {
		if got := KernelWide(key); got != want {
			t.Errorf("KernelWide(%s) = %v, want %v", key, got, want)
		}
	}
}

// A container's kernel-wide sysctl is the node's: the fix says where to
// set it; a per-namespace key and a host that is no container are left as
// they were.
func TestFixOnTheNode(t *testing.T) {
	fix := func() *Fix {
		return &Fix{Summary: "set it", Sysctl: map[string]string{"vm.swappiness": "1", "net.core.somaxconn": "4096"}}
	}
	for _, tc := range []struct {
		name      string
		container string
		sysctl    map[string]string
		want      string
	}{
		{"container", "docker (/.dockerenv)", nil, "set it; on the node that runs this container (docker (/.dockerenv)): vm.swappiness is the node kernel's, not the container's"},
		{"container, net.* only", "docker (/.dockerenv)", map[string]string{"net.core.somaxconn": "4096"}, "set it"},
		{"a host", "", nil, "set it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := Finding{Status: Fail, Fix: fix()}
			if tc.sysctl != nil {
				fd.Fix.Sysctl = tc.sysctl
			}
			onTheNode(&fd, &facts.Facts{Feasibility: &facts.Feasibility{Container: tc.container}})
			if fd.Fix.Summary != tc.want {
				t.Errorf("summary %q, want %q", fd.Fix.Summary, tc.want)
			}
		})
	}
}
