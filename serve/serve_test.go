package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/crypto/bcrypt"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics.golden")

var clock = time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)

func newTestServer(t *testing.T, o Options) *Server {
	t.Helper()
	goVersion = "go1.test"
	if o.Now == nil {
		o.Now = func() time.Time { return clock }
	}
	if o.Version == "" {
		o.Version = "0.1.0-test"
	}
	return New(o)
}

func fixture(t *testing.T) *report.Report {
	t.Helper()
	r, err := report.Load("../report/testdata/report.json")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func scrape(t *testing.T, s *Server) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// forbiddenLabels are the target labels Prometheus attaches itself: an
// exporter using them has them renamed exported_* or overwritten.
var forbiddenLabels = map[string]bool{"cluster": true, "instance": true, "job": true, "env": true, "region": true}

// checkExposition parses out and checks the conventions: HELP and TYPE
// on every family, no sample timestamp, counters named _total, no target
// label, no series twice, label values bounded. It returns the families.
func checkExposition(t *testing.T, out string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not valid text exposition: %v\n%s", err, out)
	}
	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s: no HELP", name)
		}
		if (f.GetType() == dto.MetricType_COUNTER) != strings.HasSuffix(name, "_total") {
			t.Errorf("%s: type %v: counters and only counters end in _total", name, f.GetType())
		}
		seen := map[string]bool{}
		for _, m := range f.GetMetric() {
			if m.TimestampMs != nil {
				t.Errorf("%s: a sample carries a timestamp", name)
			}
			var key []string
			for _, l := range m.GetLabel() {
				if forbiddenLabels[l.GetName()] {
					t.Errorf("%s: label %q collides with a target label", name, l.GetName())
				}
				if len(l.GetValue()) > report.MaxLabelBytes {
					t.Errorf("%s: label %s is %d bytes", name, l.GetName(), len(l.GetValue()))
				}
				key = append(key, l.GetName()+"="+l.GetValue())
			}
			k := strings.Join(key, ",")
			if seen[k] {
				t.Errorf("%s{%s}: series exposed twice (Prometheus would fail the whole scrape)", name, k)
			}
			seen[k] = true
		}
	}
	return fams
}

func value(fams map[string]*dto.MetricFamily, name string, match map[string]string) (float64, int) {
	n, v := 0, 0.0
	f := fams[name]
	if f == nil {
		return 0, 0
	}
	for _, m := range f.GetMetric() {
		ok := true
		for k, want := range match {
			got := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == k {
					got = l.GetValue()
				}
			}
			ok = ok && got == want
		}
		if ok {
			n++
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			} else {
				v = m.GetGauge().GetValue()
			}
		}
	}
	return v, n
}

// promtool runs promtool check metrics on out when promtool is installed
// (Debian: apt-get install prometheus).
func promtool(t *testing.T, out string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: check metrics skipped")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, msg)
	}
}

// TestMetricsGolden: the whole /metrics of the fixture report, served
// after one successful scan, against testdata/metrics.golden.
func TestMetricsGolden(t *testing.T) {
	s := newTestServer(t, Options{})
	s.ScanStarted()
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	s.SetWaivers([]Waiver{{Rule: "socket-buffers", Where: "waivers.yaml:3", Expires: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}})
	out := scrape(t, s)
	golden := filepath.Join("testdata", "metrics.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("/metrics differs from %s (go test ./serve -update after checking):\n%s", golden, out)
	}
	fams := checkExposition(t, out)
	promtool(t, out)
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"kaudit_scans_total", map[string]string{"result": "success"}, 1},
		{"kaudit_scans_total", map[string]string{"result": "error"}, 0},
		{"kaudit_scan_running", nil, 0},
		{"kaudit_report_from_state", nil, 0},
		{"kaudit_last_scan_success_timestamp_seconds", nil, float64(clock.Unix())},
		{"kaudit_ssh_errors_total", map[string]string{"kind": "timeout"}, 1},
		{"kaudit_ssh_errors_total", map[string]string{"kind": "auth"}, 0},
		{"kaudit_hosts", map[string]string{"state": "audited"}, 3},
		{"kaudit_hosts", map[string]string{"state": "timeout"}, 1},
		{"kaudit_hosts", map[string]string{"state": "hostkey"}, 0},
		{"kaudit_rule_failing_hosts", map[string]string{"rule": "kernel-synack-wscale", "severity": "critical"}, 1},
		{"kaudit_rule_failing_hosts", map[string]string{"rule": "client-wscale-mismatch", "severity": "critical"}, 0},
		{"kaudit_rule_failing_hosts", map[string]string{"rule": "socket-buffers", "severity": "low"}, 2},
		{"kaudit_rule_unknown_hosts", map[string]string{"rule": "kernel-synack-wscale", "severity": "critical"}, 1},
		{"kaudit_host_failed_findings", map[string]string{"host": "kafka-c1", "severity": "medium"}, 2},
		{"kaudit_host_failed_findings", map[string]string{"host": "kafka-b1", "severity": "critical"}, 0},
		{"kaudit_host_score", map[string]string{"host": "kafka-c1"}, 76},
		{"kaudit_waiver_expiry_timestamp_seconds", map[string]string{"rule": "socket-buffers"}, 1743465600},
	} {
		got, n := value(fams, c.name, c.match)
		if n != 1 || got != c.want {
			t.Errorf("%s%v = %v (%d series), want %v", c.name, c.match, got, n, c.want)
		}
	}
	// Per host × rule series are opt-in.
	for _, name := range []string{"kaudit_rule_status", "kaudit_rule_failed", "kaudit_rule_source"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s exposed without HostRules", name)
		}
	}
	// Every catalog rule has its failing-hosts series.
	if got, want := len(fams["kaudit_rule_failing_hosts"].GetMetric()), len(rules.Catalog()); got < want {
		t.Errorf("kaudit_rule_failing_hosts: %d series, want at least the %d catalog rules", got, want)
	}
}

// TestMetricsBeforeAnyReport: known series are there with 0, and no
// report family claims a fleet it has not scanned.
func TestMetricsBeforeAnyReport(t *testing.T) {
	s := newTestServer(t, Options{})
	s.ScanStarted()
	fams := checkExposition(t, scrape(t, s))
	for _, c := range []struct {
		name  string
		match map[string]string
		want  float64
	}{
		{"kaudit_report_available", nil, 0},
		{"kaudit_scan_running", nil, 1},
		{"kaudit_last_scan_success_timestamp_seconds", nil, 0},
		{"kaudit_scans_total", map[string]string{"result": "interrupted"}, 0},
		{"kaudit_ssh_errors_total", map[string]string{"kind": "unreachable"}, 0},
	} {
		if got, n := value(fams, c.name, c.match); n != 1 || got != c.want {
			t.Errorf("%s%v = %v (%d series), want %v", c.name, c.match, got, n, c.want)
		}
	}
	if _, ok := fams["kaudit_hosts"]; ok {
		t.Error("kaudit_hosts before any report")
	}
}

// hostile is a report whose host names are what an inventory may hold:
// control characters, quotes, newlines, a very long name, invalid UTF-8,
// a name given twice and two names that are the same once made visible.
func hostile() *report.Report {
	fail := func(rule string, sev rules.Severity) rules.Finding {
		return rules.Finding{Rule: rule, Status: rules.Fail, Severity: sev}
	}
	pass := func(rule string, sev rules.Severity) rules.Finding {
		return rules.Finding{Rule: rule, Status: rules.Pass, Severity: sev}
	}
	long := strings.Repeat("ü", 3000)
	r := &report.Report{SchemaVersion: report.SchemaVersion, StartedAt: clock.Add(-time.Minute), DurationMS: 1500, Hosts: []report.Host{
		{Name: "esc\x1b[31mred\x1b[0m", Findings: []rules.Finding{fail("somaxconn", rules.Medium), pass("nic-ring", rules.Medium)}},
		{Name: `q"uo\te`, Findings: []rules.Finding{fail("somaxconn", rules.Medium)}},
		{Name: "new\nline", Findings: []rules.Finding{pass("somaxconn", rules.Medium)}},
		{Name: `new\nline`, Findings: []rules.Finding{fail("somaxconn", rules.Medium)}}, // the same label once visible: dropped
		{Name: long, Findings: []rules.Finding{fail("somaxconn", rules.Medium), fail("somaxconn", rules.Medium)}},
		{Name: long + "tail", Error: &report.HostError{Kind: facts.KindAuth, Message: "denied"}}, // the same once cut
		{Name: "bad\xffutf8\u202e", Error: &report.HostError{Kind: facts.KindHostKey, Message: "changed"}},
		{Name: "dup", Findings: []rules.Finding{fail("kernel-synack-wscale", rules.Critical)}},
		{Name: "dup", Error: &report.HostError{Kind: facts.KindUnreachable, Message: "no route"}},
	}}
	for i := range r.Hosts {
		report.ScoreHost(&r.Hosts[i])
	}
	report.Summarize(r)
	return r
}

func TestMetricsHostileHosts(t *testing.T) {
	for _, hostRules := range []bool{false, true} {
		t.Run(fmt.Sprintf("host-rules=%v", hostRules), func(t *testing.T) {
			s := newTestServer(t, Options{HostRules: hostRules})
			if err := s.ScanDone(hostile(), Success); err != nil {
				t.Fatal(err)
			}
			out := scrape(t, s)
			fams := checkExposition(t, out)
			promtool(t, out)
			if strings.ContainsAny(out, "\x1b\u202e") || strings.Contains(out, "\xff") {
				t.Error("a control character, bidi override or invalid UTF-8 reached the exposition")
			}
			// 9 entries, 6 distinct labels: 4 audited (esc, quote, newline, long, dup — the first dup entry is audited) …
			for state, want := range map[string]float64{"audited": 5, "auth": 0, "hostkey": 1, "unreachable": 0} {
				if got, n := value(fams, "kaudit_hosts", map[string]string{"state": state}); n != 1 || got != want {
					t.Errorf("kaudit_hosts{state=%s} = %v (%d), want %v", state, got, n, want)
				}
			}
			// … and the fleet counts agree with the per-host series.
			if got, _ := value(fams, "kaudit_rule_failing_hosts", map[string]string{"rule": "somaxconn", "severity": "medium"}); got != 3 {
				t.Errorf("somaxconn failing hosts = %v, want 3 (esc, quote, long; not the second new\\nline)", got)
			}
			if got, n := value(fams, "kaudit_host_up", map[string]string{"host": "dup"}); n != 1 || got != 1 {
				t.Errorf("kaudit_host_up{host=dup} = %v (%d series), want 1 from its first entry", got, n)
			}
			if _, n := value(fams, "kaudit_host_error", map[string]string{"host": "dup"}); n != 0 {
				t.Error("kaudit_host_error for dup: its second entry leaked")
			}
			if got, n := value(fams, "kaudit_host_up", map[string]string{"host": `new\nline`}); n != 1 || got != 1 {
				t.Errorf(`kaudit_host_up{host="new\nline"}: %v (%d series)`, got, n)
			}
			if _, n := value(fams, "kaudit_host_up", map[string]string{"host": `q"uo\te`}); n != 1 {
				t.Error("quote and backslash did not round-trip")
			}
			if got := len(fams["kaudit_host_up"].GetMetric()); got != 6 {
				t.Errorf("kaudit_host_up: %d series, want 6 distinct hosts", got)
			}
		})
	}
}

func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	s := newTestServer(t, Options{StateDir: dir})
	r := fixture(t)
	if err := s.ScanDone(r, Success); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.Render(&want, "json", r, report.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("state file is not the scan -f json rendering (err %v)", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".kaudit-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	// A restart serves it, marked as from the state file.
	s2 := newTestServer(t, Options{StateDir: dir})
	if err := s2.LoadState(); err != nil {
		t.Fatal(err)
	}
	if cur, fromState := s2.Report(); cur == nil || !fromState {
		t.Fatal("the state file's report is not served")
	}
	fams := checkExposition(t, scrape(t, s2))
	if v, _ := value(fams, "kaudit_report_from_state", nil); v != 1 {
		t.Error("kaudit_report_from_state is not 1")
	}
	if v, _ := value(fams, "kaudit_host_score", map[string]string{"host": "kafka-c1"}); v != 76 {
		t.Errorf("state report's kafka-c1 score %v, want 76", v)
	}
	// Its end: started_at + duration_ms of the fixture.
	if v, _ := value(fams, "kaudit_last_scan_success_timestamp_seconds", nil); v != 1741944600+12.345 {
		t.Errorf("last success %v, want the state report's end", v)
	}
	rec := httptest.NewRecorder()
	s2.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/report.json", nil))
	if rec.Code != 200 || rec.Header().Get("X-Kaudit-Report-From-State") != "true" || !bytes.Equal(rec.Body.Bytes(), want.Bytes()) {
		t.Errorf("/report.json after a restart: %d, from-state %q", rec.Code, rec.Header().Get("X-Kaudit-Report-From-State"))
	}
	if age := rec.Header().Get("X-Kaudit-Report-Age-Seconds"); age != "1800" {
		t.Errorf("age header %q, want 1800 (30 min)", age)
	}

	// A new scan replaces it; kafka-a1, unreachable in it, keeps the time
	// it was last audited (the state file's scan).
	next := fixture(t)
	next.StartedAt = clock
	next.Hosts[0].Error = &report.HostError{Kind: facts.KindUnreachable, Message: "no route"}
	report.Summarize(next)
	if err := s2.ScanDone(next, Success); err != nil {
		t.Fatal(err)
	}
	if _, fromState := s2.Report(); fromState {
		t.Error("still marked from the state file after a scan")
	}
	fams = checkExposition(t, scrape(t, s2))
	if v, _ := value(fams, "kaudit_host_last_audit_timestamp_seconds", map[string]string{"host": "kafka-a1"}); v != 1741944600 {
		t.Errorf("kafka-a1 last audit %v, want the state report's start 1741944600", v)
	}
	if v, _ := value(fams, "kaudit_host_last_audit_timestamp_seconds", map[string]string{"host": "kafka-b1"}); v != float64(clock.Unix()) {
		t.Errorf("kafka-b1 last audit %v, want the new scan's start", v)
	}
}

func TestBadStateFile(t *testing.T) {
	for name, content := range map[string]string{
		"not json":       "{not json",
		"other schema":   `{"schema_version": 99, "hosts": []}`,
		"a directory":    "",
		"truncated json": `{"schema_version": 1, "hosts": [{"name": "a"`,
		// Issue 34, row 10: JSON with a schema_version that is no report, and a file past the limit.
		"not a report":  `{"schema_version": 1}`,
		"no started_at": `{"schema_version": 1, "hosts": [{"name": "a"}]}`,
		"too large":     `{"schema_version": 1, "started_at": "2025-03-14T10:00:00Z", "hosts": [], "pad": "` + strings.Repeat("x", 5000) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, StateFile)
			var err error
			if name == "a directory" {
				err = os.Mkdir(path, 0o700)
			} else {
				err = os.WriteFile(path, []byte(content), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			s := newTestServer(t, Options{StateDir: dir, MaxStateBytes: 4096})
			err = s.LoadState()
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("LoadState = %v, want an error naming %s", err, path)
			}
			if r, _ := s.Report(); r != nil {
				t.Error("a bad state file is served")
			}
		})
	}
	// No state file: nothing to say.
	if err := newTestServer(t, Options{StateDir: t.TempDir()}).LoadState(); err != nil {
		t.Errorf("no state file: %v", err)
	}
}

func TestEndpoints(t *testing.T) {
	s := newTestServer(t, Options{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 503, "/report.json": 503, "/report.html": 503, "/": 200, "/metrics": 200, "/nothing": 404} {
		if code, _, _ := get(path); code != want {
			t.Errorf("before a report: GET %s = %d, want %d", path, code, want)
		}
	}
	s.ScanStarted()
	if err := s.ScanDone(hostile(), Success); err != nil {
		t.Fatal(err)
	}
	s.ScanStarted() // the next scan runs: everything is served from the last one
	code, body, h := get("/metrics")
	if code != 200 || h.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" || !strings.Contains(body, "kaudit_scan_running 1\n") || !strings.Contains(body, `kaudit_hosts{state="audited"} 5`) {
		t.Errorf("/metrics during a scan: %d %s\n%s", code, h.Get("Content-Type"), body)
	}
	code, body, _ = get("/report.json")
	var r report.Report
	if code != 200 || json.Unmarshal([]byte(body), &r) != nil || len(r.Hosts) != 9 {
		t.Errorf("/report.json: %d, %d hosts", code, len(r.Hosts))
	}
	code, body, _ = get("/report.html")
	if code != 200 || strings.Contains(body, "\x1b") || strings.Contains(body, `q"uo\te<`) {
		t.Errorf("/report.html: %d, host text not made safe", code)
	}
	if code, body, _ = get("/readyz"); code != 200 || !strings.Contains(body, "scanned by this process") {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if code, body, _ = get("/"); code != 200 || !strings.Contains(body, "A scan is running") || !strings.Contains(body, "9 hosts") {
		t.Errorf("/: %d\n%s", code, body)
	}
	resp, err := http.Post(ts.URL+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics = %d, want 405", resp.StatusCode)
	}
}

// TestScanResults: interrupted and failed scans are counted, not served.
func TestScanResults(t *testing.T) {
	s := newTestServer(t, Options{})
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	if err := s.ScanDone(hostile(), Interrupted); err != nil {
		t.Fatal(err)
	}
	if err := s.ScanDone(nil, Failed); err != nil {
		t.Fatal(err)
	}
	fams := checkExposition(t, scrape(t, s))
	for result, want := range map[string]float64{Success: 1, Interrupted: 1, Failed: 1} {
		if v, _ := value(fams, "kaudit_scans_total", map[string]string{"result": result}); v != want {
			t.Errorf("scans{%s} = %v", result, v)
		}
	}
	if v, _ := value(fams, "kaudit_hosts", map[string]string{"state": "audited"}); v != 3 {
		t.Errorf("an interrupted scan replaced the report: audited %v", v)
	}
	// Host errors of the interrupted scan count too: auth 1 + hostkey 1 + unreachable 1 (dup).
	if v, _ := value(fams, "kaudit_ssh_errors_total", map[string]string{"kind": "hostkey"}); v != 1 {
		t.Errorf("ssh errors hostkey = %v", v)
	}
}

// TestCardinality is the count docs/serve.md states: series of /metrics
// for 10,000 audited hosts, default and with HostRules.
func TestCardinality(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 hosts: not in -short")
	}
	var hosts []report.Host
	for i := range 10000 {
		var fs []rules.Finding
		for _, ru := range rules.Catalog() {
			fs = append(fs, rules.Finding{Rule: ru.ID, Severity: ru.Severity, Status: rules.Pass})
		}
		h := report.Host{Name: fmt.Sprintf("kafka-%05d", i), Findings: fs}
		if i%100 == 0 {
			h = report.Host{Name: h.Name, Error: &report.HostError{Kind: facts.KindUnreachable}}
		}
		hosts = append(hosts, h)
	}
	r := &report.Report{SchemaVersion: report.SchemaVersion, StartedAt: clock, Hosts: hosts}
	report.Summarize(r)
	for _, hostRules := range []bool{false, true} {
		s := newTestServer(t, Options{HostRules: hostRules})
		if err := s.ScanDone(r, Success); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range checkExposition(t, scrape(t, s)) {
			n += len(f.GetMetric())
		}
		t.Logf("10,000 hosts, host-rules=%v: %d series", hostRules, n)
		if want := expectSeries(hostRules); n != want {
			t.Errorf("host-rules=%v: %d series, want %d", hostRules, n, want)
		}
	}
}

// The fixed series: serve's own (build 1, scans 3, running 1, last success
// 1, from state 1, available 1, ssh errors 5, state write errors 1, reload 1) and the report's
// fleet view (hosts by state 6, failing and unknown hosts 2 × 17 rules,
// fleet score 1, scan time 1, duration 1).
var (
	serveFixed = 1 + 3 + 1 + 1 + 1 + 1 + 5 + 1 + 1
	fleetFixed = 6 + 2*len(rules.Catalog()) + 3
)

// expectSeries: 9,900 audited hosts (up, score, 5 severities, last audit:
// 8 each), 100 unreachable (up, error: 2 each), and with host rules 17
// catalog rules × 2 families (status, failed) per audited host.
func expectSeries(hostRules bool) int {
	n := serveFixed + fleetFixed + 9900*8 + 100*2
	if hostRules {
		n += 9900 * len(rules.Catalog()) * 2
	}
	return n
}

// TestWebConfig: --web.config.file as the exporter toolkit reads it: TLS
// and basic auth (bcrypt) on every endpoint; Serve returns nil when its
// context ends.
func TestWebConfig(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kaudit-test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: clock.Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crt := write("tls.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	write("tls.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := write("web.yml", []byte(fmt.Sprintf("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  prometheus: %s\n", hash)))
	if w, err := ReadWebConfig(cfg); err != nil || w != (WebConfig{TLS: true, Auth: true}) || w.Scheme() != "https" {
		t.Fatalf("ReadWebConfig = %+v, %v; want TLS and auth", w, err)
	}
	if err := func() error {
		_, err := ReadWebConfig(write("bad.yml", []byte("basic_auth_users: [not a map]\n")))
		return err
	}(); err == nil || !strings.Contains(err.Error(), "--web.config.file") {
		t.Errorf("a bad web config: %v", err)
	}
	authOnly := write("auth.yml", []byte(fmt.Sprintf("basic_auth_users:\n  prometheus: %s\n", hash)))
	if w, err := ReadWebConfig(authOnly); err != nil || w != (WebConfig{Auth: true}) || w.Scheme() != "http" {
		t.Errorf("basic auth alone: %+v, %v", w, err)
	}
	// Issue 34, row 10: a file that turns nothing on served without
	// authentication and no word.
	for name, content := range map[string]string{"empty.yml": "", "comments.yml": "# TLS later\n", "nulls.yml": "tls_server_config:\nbasic_auth_users:\n"} {
		_, err := ReadWebConfig(write(name, []byte(content)))
		if err == nil || !strings.Contains(err.Error(), "neither TLS") || !strings.Contains(err.Error(), "(hint: ") {
			t.Errorf("%s: ReadWebConfig = %v, want it refused with a hint", name, err)
		}
	}

	s := newTestServer(t, Options{})
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()

	pool := x509.NewCertPool()
	pemCrt, _ := os.ReadFile(crt)
	pool.AppendCertsFromPEM(pemCrt)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(scheme, user, pass string) int {
		req, _ := http.NewRequest("GET", scheme+"://"+l.Addr().String()+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var code int
	for range 50 { // the server starts in its goroutine
		if code = get("https", "prometheus", "s3cret"); code != 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code != 200 {
		t.Errorf("https with the password: %d, want 200", code)
	}
	if code := get("https", "prometheus", "wrong"); code != 401 {
		t.Errorf("https with a wrong password: %d, want 401", code)
	}
	if code := get("https", "", ""); code != 401 {
		t.Errorf("https without a password: %d, want 401", code)
	}
	if code := get("http", "prometheus", "s3cret"); code == 200 {
		t.Error("plain HTTP answered 200 with TLS configured")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// /report.html of a fleet of more than report.GroupedAbove hosts is the
// grouped page kaudit scan -f html writes: actions first, every host an
// entry of its pattern.
func TestReportHTMLGrouped(t *testing.T) {
	small := fixture(t)
	r := *small
	r.Hosts = nil
	for i := 0; i <= report.GroupedAbove; i++ {
		h := small.Hosts[i%len(small.Hosts)]
		h.Name = fmt.Sprintf("%s-%02d", h.Name, i)
		r.Hosts = append(r.Hosts, h)
	}
	report.Summarize(&r)
	s := newTestServer(t, Options{})
	s.ScanStarted()
	if err := s.ScanDone(&r, Success); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/report.html", nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "What to fix first") {
		t.Fatalf("/report.html: %d, not grouped", rec.Code)
	}
	for _, h := range r.Hosts {
		if !strings.Contains(body, `id="host-`+h.Name+`"><summary>`+h.Name+`</summary>`) {
			t.Errorf("host %s has no entry", h.Name)
		}
	}
}

// TestLocalFaultFailsTheScan (issue 34, row 9): a scan some of whose
// hosts failed on kaudit's side (out of open files: facts.KindLocal) is
// an error, its hosts' errors are not counted against them, and the
// report served before stays served.
func TestLocalFaultFailsTheScan(t *testing.T) {
	s := newTestServer(t, Options{})
	if err := s.ScanDone(fixture(t), Success); err != nil {
		t.Fatal(err)
	}
	before := checkExposition(t, scrape(t, s))
	flood := &report.Report{SchemaVersion: report.SchemaVersion, StartedAt: clock, Hosts: []report.Host{
		{Name: "a", Error: &report.HostError{Kind: facts.KindLocal, Message: "connect: socket: too many open files"}},
		{Name: "b", Error: &report.HostError{Kind: facts.KindLocal, Message: "connect: socket: too many open files"}},
		{Name: "c", Error: &report.HostError{Kind: facts.KindUnreachable, Message: "no route"}},
	}}
	report.Summarize(flood)
	err := s.ScanDone(flood, Success)
	var lf *LocalFault
	if !errors.As(err, &lf) || lf.Hosts != 2 || !strings.HasPrefix(lf.First, "a: ") {
		t.Fatalf("ScanDone = %v, want a LocalFault of 2 hosts, a first", err)
	}
	fams := checkExposition(t, scrape(t, s))
	for result, want := range map[string]float64{Success: 1, Failed: 1} {
		if v, _ := value(fams, "kaudit_scans_total", map[string]string{"result": result}); v != want {
			t.Errorf("scans{%s} = %v, want %v", result, v, want)
		}
	}
	for _, k := range facts.ErrorKinds {
		was, _ := value(before, "kaudit_ssh_errors_total", map[string]string{"kind": string(k)})
		if v, _ := value(fams, "kaudit_ssh_errors_total", map[string]string{"kind": string(k)}); v != was {
			t.Errorf("ssh errors %s: %v, then %v: a scan that failed on kaudit's side counted against its hosts", k, was, v)
		}
	}
	if v, _ := value(fams, "kaudit_hosts", map[string]string{"state": "audited"}); v != 3 {
		t.Errorf("the failed scan replaced the served report: audited %v, want the fixture's 3", v)
	}
	if r, _ := s.Report(); r == flood {
		t.Error("the failed scan's report is served")
	}
}

// TestStateWriteErrorsCounted (issue 34, row 10): a report the state
// directory cannot take is served, its write error returned and counted.
func TestStateWriteErrorsCounted(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, StateFile), 0o700); err != nil { // the state file's place taken
		t.Fatal(err)
	}
	s := newTestServer(t, Options{StateDir: dir})
	for i := range 2 {
		if err := s.ScanDone(fixture(t), Success); err == nil {
			t.Fatalf("scan %d: no error writing the state file over a directory", i+1)
		}
	}
	fams := checkExposition(t, scrape(t, s))
	if v, n := value(fams, "kaudit_state_write_errors_total", nil); n != 1 || v != 2 {
		t.Errorf("kaudit_state_write_errors_total = %v (%d series), want 2", v, n)
	}
	if r, _ := s.Report(); r == nil {
		t.Error("a report the state file could not take is not served")
	}
}
