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

// The exit codes of kaudit report (the bar, --fail-on, waivers, an
// unaudited host) and its usage errors are in testdata/script/report.txtar.

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
