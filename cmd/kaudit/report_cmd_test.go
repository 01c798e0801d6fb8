package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaudit/kaudit/report"
)

const (
	reportFixture = "../../report/testdata/report.json" // 4 hosts, 1 unreachable, critical failures
	diffOld       = "../../report/diff/testdata/old.json"
	diffNew       = "../../report/diff/testdata/new.json"
)

func TestReportEveryFormat(t *testing.T) {
	dir := t.TempDir()
	for _, f := range report.Formats() {
		out := filepath.Join(dir, "report."+f)
		code, stdout, stderr := runCLI(t, "report", reportFixture, "--format", f, "-o", out)
		if code != ExitFindings {
			t.Errorf("%s: exit %d, want %d (stderr %s)", f, code, ExitFindings, stderr)
		}
		if stdout != "" {
			t.Errorf("%s: wrote to stdout with -o: %q", f, stdout)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) == 0 {
			t.Fatalf("%s: %v (%d bytes)", f, err, len(data))
		}
		switch f {
		case "json":
			var r report.Report
			if err := json.Unmarshal(data, &r); err != nil || len(r.Hosts) != 4 || r.SchemaVersion != 1 {
				t.Errorf("json: %v %d hosts", err, len(r.Hosts))
			}
		case "html":
			if !strings.Contains(string(data), `id="host-kafka-a1"`) {
				t.Errorf("html lacks the host section")
			}
		case "junit":
			if err := xml.Unmarshal(data, new(struct{})); err != nil {
				t.Errorf("junit: %v", err)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".kaudit-report-*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// Re-rendering a JSON report as JSON gives back the same report.
func TestReportJSONRoundTrip(t *testing.T) {
	code, out, _ := runCLI(t, "report", reportFixture, "-f", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d", code)
	}
	orig, err := report.Load(reportFixture)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	if got.Summary.Score != orig.Summary.Score || got.Summary.Audited != orig.Summary.Audited || len(got.Hosts) != len(orig.Hosts) {
		t.Errorf("summary %+v, fixture %+v", got.Summary, orig.Summary)
	}
	for i := range got.Hosts {
		if got.Hosts[i].Score != orig.Hosts[i].Score {
			t.Errorf("%s: score %d, fixture %d", got.Hosts[i].Name, got.Hosts[i].Score, orig.Hosts[i].Score)
		}
	}
}

func TestReportExitCodes(t *testing.T) {
	dir := t.TempDir()
	waiveAll := filepath.Join(dir, "all.yaml")
	var b strings.Builder
	b.WriteString("waivers:\n")
	for _, rule := range []string{"kernel-synack-wscale", "kafka-backlog-hardcoded", "somaxconn", "tcp-timestamps"} {
		b.WriteString("  - rule: " + rule + "\n    hosts: ['*']\n    reason: test\n")
	}
	if err := os.WriteFile(waiveAll, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Waive only the critical and high ones on kafka-a1 in new.json: medium remains.
	waiveHigh := filepath.Join(dir, "high.yaml")
	os.WriteFile(waiveHigh, []byte("waivers:\n  - rule: kernel-synack-wscale\n    hosts: [kafka-a1]\n    reason: r\n  - rule: tcp-timestamps\n    hosts: [kafka-a1]\n    reason: r\n"), 0o600) //nolint:errcheck
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema_version": 9}`), 0o600) //nolint:errcheck

	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"fails at high", []string{reportFixture}, ExitFindings},
		{"fail-on from the report (high)", []string{diffNew}, ExitFindings},
		{"explicit fail-on critical", []string{diffNew, "--fail-on", "critical"}, ExitFindings},
		{"waived below threshold", []string{diffNew, "--waivers", waiveHigh}, ExitOK},
		{"waived, medium at fail-on medium", []string{diffNew, "--waivers", waiveHigh, "--fail-on", "medium"}, ExitFindings},
		{"all waived, one host unreachable", []string{diffOld, "--waivers", waiveAll}, ExitUnaudited},
		{"no argument", nil, ExitUsage},
		{"two arguments", []string{diffOld, diffNew}, ExitUsage},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, ExitUsage},
		{"other schema", []string{bad}, ExitUsage},
		{"bad format", []string{diffOld, "-f", "pdf"}, ExitUsage},
		{"bad fail-on", []string{diffOld, "--fail-on", "severe"}, ExitUsage},
		{"bad waivers", []string{diffOld, "--waivers", bad}, ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"report", "--no-color"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %s)", code, tc.code, stderr)
			}
		})
	}
}

func TestReportInterruptedScanKeeps130(t *testing.T) {
	r, err := report.Load(diffNew)
	if err != nil {
		t.Fatal(err)
	}
	r.Interrupted = true
	data, _ := json.Marshal(r)
	p := filepath.Join(t.TempDir(), "int.json")
	os.WriteFile(p, data, 0o600) //nolint:errcheck
	if code, _, _ := runCLI(t, "report", p); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
}

func TestReportWaiversShowInJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(p, []byte("waivers:\n  - rule: kernel-synack-wscale\n    hosts: [kafka-a1]\n    reason: CHG-1\n    owner: ops\n    expires: 2999-01-01\n  - rule: somaxconn\n    hosts: ['*']\n    reason: old\n    expires: 2000-01-01\n"), 0o600) //nolint:errcheck
	code, out, stderr := runCLI(t, "report", diffNew, "-f", "json", "--waivers", p, "--fail-on", "critical")
	if code != ExitOK {
		t.Errorf("exit %d, want 0 (critical waived): %s", code, stderr)
	}
	if !strings.Contains(stderr, "kaudit: warning: "+p+":7: waiver for somaxconn on hosts * expired on 2000-01-01: 1 finding(s)") {
		t.Errorf("stderr %q", stderr)
	}
	r := decode(t, out)
	f := finding(t, r, "kafka-a1", "kernel-synack-wscale")
	if f.Status != "waived" || len(f.Evidence) == 0 || !strings.Contains(f.Evidence[len(f.Evidence)-1], "CHG-1") {
		t.Errorf("finding %+v", f)
	}
	if r.Summary.StatusCounts["waived"] != 1 || r.Summary.FailBySeverity["critical"] != 0 {
		t.Errorf("summary %+v", r.Summary)
	}
	if f := finding(t, r, "kafka-d4", "somaxconn"); f.Status != "fail" {
		t.Errorf("expired waiver applied: %+v", f)
	}
}
