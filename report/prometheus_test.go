package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/rules"
)

func parseProm(t *testing.T, out string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not valid text exposition: %v\n%s", err, out)
	}
	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s: no HELP", name)
		}
		if f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s: type %v, want gauge", name, f.GetType())
		}
		for _, m := range f.GetMetric() {
			if m.TimestampMs != nil {
				t.Errorf("%s: sample has a timestamp (the textfile collector rejects them)", name)
			}
		}
	}
	return fams
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value finds the one series of family name matching every given label.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, match map[string]string) (float64, bool) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	found, v := 0, 0.0
	for _, m := range f.GetMetric() {
		ls := labelsOf(m)
		ok := true
		for k, want := range match {
			if ls[k] != want {
				ok = false
			}
		}
		if ok {
			found++
			v = m.GetGauge().GetValue()
		}
	}
	if found > 1 {
		t.Errorf("%s%v matches %d series", name, match, found)
	}
	return v, found == 1
}

func TestPrometheusFixture(t *testing.T) {
	fams := parseProm(t, renderString(t, "prometheus", loadFixture(t), Options{}))
	for _, name := range []string{"kaudit_rule_status", "kaudit_rule_failed", "kaudit_host_score", "kaudit_host_up",
		"kaudit_host_error", "kaudit_fleet_score", "kaudit_scan_timestamp_seconds", "kaudit_scan_duration_seconds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("family %s missing", name)
		}
	}
	if n := len(fams["kaudit_rule_status"].GetMetric()); n != 45 {
		t.Errorf("kaudit_rule_status has %d series, want 45 (3 audited hosts × 15 rules)", n)
	}
	if n := len(fams["kaudit_rule_failed"].GetMetric()); n != 45 {
		t.Errorf("kaudit_rule_failed has %d series, want 45", n)
	}
	checks := []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"kaudit_rule_status", map[string]string{"host": "kafka-a1", "rule": "kernel-synack-wscale", "severity": "critical", "status": "fail"}, 1},
		{"kaudit_rule_status", map[string]string{"host": "kafka-c1", "rule": "kernel-synack-wscale", "status": "unknown"}, 1},
		{"kaudit_rule_status", map[string]string{"host": "kafka-b1", "rule": "syn-backlog", "status": "warn"}, 1},
		{"kaudit_rule_failed", map[string]string{"host": "kafka-a1", "rule": "somaxconn", "severity": "medium"}, 1},
		{"kaudit_rule_failed", map[string]string{"host": "kafka-b1", "rule": "somaxconn"}, 0},
		{"kaudit_rule_failed", map[string]string{"host": "kafka-c1", "rule": "nic-ring"}, 0},
		{"kaudit_host_score", map[string]string{"host": "kafka-a1"}, 0},
		{"kaudit_host_score", map[string]string{"host": "kafka-b1"}, 100},
		{"kaudit_host_score", map[string]string{"host": "kafka-c1"}, 76},
		{"kaudit_host_up", map[string]string{"host": "kafka-b1"}, 1},
		{"kaudit_host_up", map[string]string{"host": "kafka-d1"}, 0},
		{"kaudit_host_error", map[string]string{"host": "kafka-d1", "kind": "timeout"}, 1},
		{"kaudit_fleet_score", nil, 58},
		{"kaudit_scan_timestamp_seconds", nil, 1741944600},
		{"kaudit_scan_duration_seconds", nil, 12.345},
	}
	for _, c := range checks {
		got, ok := value(t, fams, c.name, c.match)
		if !ok {
			t.Errorf("%s%v: no series", c.name, c.match)
			continue
		}
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v, want %v", c.name, c.match, got, c.want)
		}
	}
	// An unaudited host has no score and no rule series.
	if _, ok := value(t, fams, "kaudit_host_score", map[string]string{"host": "kafka-d1"}); ok {
		t.Error("kafka-d1 (timeout) must have no kaudit_host_score")
	}
	if n := len(fams["kaudit_host_error"].GetMetric()); n != 1 {
		t.Errorf("kaudit_host_error has %d series, want 1", n)
	}
	// One kaudit_rule_status series per host × rule.
	seen := map[string]bool{}
	for _, m := range fams["kaudit_rule_status"].GetMetric() {
		ls := labelsOf(m)
		k := ls["host"] + "/" + ls["rule"]
		if seen[k] {
			t.Errorf("two status series for %s", k)
		}
		seen[k] = true
	}
}

func TestPrometheusLabelEscaping(t *testing.T) {
	host := "we\"ird\\host\nname"
	r := &Report{SchemaVersion: SchemaVersion, Hosts: []Host{
		{Name: host, Findings: []rules.Finding{
			{Rule: "somaxconn", Status: rules.Fail, Severity: rules.Medium},
			{Rule: "somaxconn", Status: rules.Pass, Severity: rules.Medium}, // duplicate: first one wins
		}},
		{Name: "bad\xffutf8", Error: &HostError{Kind: facts.KindAuth, Message: "denied"}},
	}}
	Summarize(r)
	var buf bytes.Buffer
	if err := Render(&buf, "prometheus", r, Options{}); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, buf.String())
	// Quote and backslash round-trip; the newline is made visible (termsafe).
	if v, ok := value(t, fams, "kaudit_rule_failed", map[string]string{"host": `we"ird\host\nname`, "rule": "somaxconn"}); !ok || v != 1 {
		t.Errorf("escaped host label did not round-trip: %v %v\n%s", v, ok, buf.String())
	}
	if n := len(fams["kaudit_rule_status"].GetMetric()); n != 1 {
		t.Errorf("duplicate finding produced %d status series, want 1", n)
	}
	if _, ok := value(t, fams, "kaudit_host_up", map[string]string{"host": `bad\xffutf8`}); !ok {
		t.Error("invalid UTF-8 host name not shown as \\xff")
	}
	if _, ok := fams["kaudit_scan_timestamp_seconds"]; ok {
		t.Error("zero StartedAt must not produce a timestamp gauge")
	}
}

func TestPrometheusNoAudited(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Hosts: []Host{{Name: "x", Error: &HostError{Kind: facts.KindUnreachable, Message: "no route"}}}}
	Summarize(r)
	fams := parseProm(t, renderString(t, "prometheus", r, Options{}))
	for _, absent := range []string{"kaudit_fleet_score", "kaudit_host_score", "kaudit_rule_status"} {
		if _, ok := fams[absent]; ok {
			t.Errorf("%s present with no audited host", absent)
		}
	}
	if v, ok := value(t, fams, "kaudit_host_up", map[string]string{"host": "x"}); !ok || v != 0 {
		t.Error("kaudit_host_up{host=x} should be 0")
	}
}

// TestPrometheusClusterSeriesBounded: a report (read from a file) whose
// cluster lists 50,000 brokers writes MaxClusterBrokerSeries broker
// series and counts the rest.
func TestPrometheusClusterSeriesBounded(t *testing.T) {
	r := loadFixture(t)
	c := &Cluster{ID: "big", Bootstrap: "b:9092"}
	for i := range 50000 {
		c.Brokers = append(c.Brokers, ClusterBroker{NodeID: int32(i), Advertised: fmt.Sprintf("k%d:9092", i)})
	}
	r.Cluster = c
	var b bytes.Buffer
	if err := Render(&b, "prometheus", r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\nkaudit_cluster_broker{"); n != MaxClusterBrokerSeries {
		t.Errorf("%d kaudit_cluster_broker series, want %d", n, MaxClusterBrokerSeries)
	}
	if want := fmt.Sprintf("kaudit_cluster_brokers_unlisted{cluster=\"big\"} %d\n", 50000-MaxClusterBrokerSeries); !strings.Contains(out, want) {
		t.Errorf("no %q", want)
	}
}
