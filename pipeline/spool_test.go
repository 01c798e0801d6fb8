package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
	"github.com/kaudit/kaudit/whatif"
)

// renderMasked renders r with its timings, which differ between two scans
// of one fleet, zeroed (Config.Now fixes the start).
func renderMasked(t *testing.T, r *report.Report, format string) []byte {
	t.Helper()
	r.DurationMS = 0
	for i := range r.Hosts {
		r.Hosts[i].DurationMS = 0
	}
	var b bytes.Buffer
	if err := report.Render(&b, format, r, report.Options{Width: 120}); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.Bytes()
}

// A scan that spools its facts (the demo fleet, one host down) leaves no
// facts in the report and renders every format byte for byte as a scan
// that keeps them, fleet findings included; Close frees the spool and
// nothing is left in its directory.
func TestScanSpoolFacts(t *testing.T) {
	f := startFleet(t, simhost.DemoFleet(), "kafka-down-08")
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	cfg := pipeline.Config{Concurrency: 4, Timeout: 20 * time.Second, ConnectTimeout: 5 * time.Second,
		Profile: rules.DefaultProfile(), FailOn: rules.Medium, Now: func() time.Time { return at }}
	held, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SpoolFacts, cfg.SpoolDir = true, t.TempDir()
	spooled, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, h := range spooled.Hosts {
		if h.Facts != nil {
			t.Errorf("%s: facts held in memory", h.Name)
		}
		if h.Spooled != nil {
			n++
		}
	}
	if n != spooled.Summary.Audited || n != 9 {
		t.Fatalf("%d hosts spooled, want the 9 audited", n)
	}
	if fd := finding(t, spooled, "kafka-centos7-01", rules.RuleClientWscaleMismatch); fd.Status != rules.Fail {
		t.Errorf("fleet pass on spooled facts: %s %q", fd.Status, fd.Observed)
	}
	for _, format := range report.Formats() {
		if got, want := renderMasked(t, spooled, format), renderMasked(t, held, format); !bytes.Equal(got, want) {
			t.Errorf("%s: spooled scan renders differently from a held one", format)
		}
	}
	if left, _ := os.ReadDir(cfg.SpoolDir); len(left) != 0 {
		t.Errorf("spool directory not empty: %v", left)
	}
	if err := spooled.Close(); err != nil {
		t.Fatal(err)
	}
	if err := report.Render(&bytes.Buffer{}, "json", spooled, report.Options{}); err == nil {
		t.Error("rendered after Close")
	}
}

// A spool that cannot be created is an error before any connection.
func TestScanSpoolDirMissing(t *testing.T) {
	hosts := []inventory.Host{{Name: "h1", Address: "192.0.2.1"}}
	cfg := pipeline.Config{Profile: rules.DefaultProfile(), SpoolFacts: true, SpoolDir: "/nonexistent/kaudit-spool"}
	if _, err := pipeline.Audit(context.Background(), hosts, cfg); err == nil || !regexp.MustCompile(`facts spool: .*/nonexistent/kaudit-spool.*hint: set TMPDIR`).MatchString(err.Error()) {
		t.Fatalf("err %v, want the spool's directory and a hint", err)
	}
}

func TestSpoolFor(t *testing.T) {
	plain := []inventory.Host{{Name: "a"}, {Name: "b"}}
	planned := []inventory.Host{{Name: "a"}, {Name: "b", AssumeKafka: "3.6.1"}}
	for _, c := range []struct {
		a     whatif.Assume
		hosts []inventory.Host
		want  bool
	}{
		{whatif.Assume{}, plain, true},
		{whatif.Assume{Kernel: "5.10.0"}, plain, false},
		{whatif.Assume{Kafka: "3.6.1"}, plain, false},
		{whatif.Assume{}, planned, false},
	} {
		if got := pipeline.SpoolFor(c.a, c.hosts); got != c.want {
			t.Errorf("SpoolFor(%+v, %d hosts) = %v, want %v", c.a, len(c.hosts), got, c.want)
		}
	}
}

// TestScanSpoolRetainsLittle guards issue 13's 300 MB and issue 31's
// 200 MB at 10,000 hosts (bench/scan-rss.sh): a spooled scan of 140
// hosts (7 kinds) keeps little per host live, measured after a GC (not
// a timing: it does not depend on the machine's speed or load), at two
// moments:
//   - at the gather's end (the last host's Progress; at most 3 hosts in
//     flight), before the fleet pass: hosts judged alike share one
//     findings slice (rules.Interner.List), their fleet facts' maps
//     (Interner.FleetFacts) and view facts (report.Spool.Put); measured
//     7.4–7.7 KB a host, 5.0–5.8 KB for a JSON-only report (no view
//     facts);
//   - once the scan is done: each host has its own findings again (the
//     fleet pass copies them with the fleet rules' in, ≈ 6.6 KB: one
//     finding per rule), the report entry and, unless the report is
//     JSON only, its view facts; measured 10.2–10.3 KB a host, 8.5–8.6
//     KB for JSON (12.9–13.1 KB before issue 31).
func TestScanSpoolRetainsLittle(t *testing.T) {
	var sims []*simhost.Host
	for i := range 140 {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("m%03d", i)
		sims = append(sims, h)
	}
	f := startFleet(t, sims)
	for _, c := range []struct {
		name              string
		jsonOnly          bool
		gathered, retains int64 // bytes a host at most
	}{
		{"any format", false, 9 << 10, 11 << 10},
		{"JSON only", true, 7 << 10, 19 << 9},
	} {
		cfg := pipeline.Config{Concurrency: 4, Profile: rules.DefaultProfile(), SpoolFacts: true, SpoolDir: t.TempDir(), JSONOnly: c.jsonOnly}
		var m0, mg, m1 runtime.MemStats
		var done atomic.Int32
		cfg.Progress = func(audit.Result) {
			if done.Add(1) == int32(len(sims)) { // at most 3 hosts still in flight
				runtime.GC()
				runtime.ReadMemStats(&mg)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m0)
		r, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		if r.Summary.Audited != len(sims) {
			t.Fatalf("%s: %d of %d hosts audited", c.name, r.Summary.Audited, len(sims))
		}
		gathered := (int64(mg.HeapAlloc) - int64(m0.HeapAlloc)) / int64(len(sims))
		retains := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / int64(len(sims))
		t.Logf("%s: %d B a host at the gather's end, %d B once done", c.name, gathered, retains)
		if gathered > c.gathered {
			t.Errorf("%s: a spooled scan holds %d B per host live at the gather's end, want ≤ %d (issue 31: 10,000 hosts in 200 MB)", c.name, gathered, c.gathered)
		}
		if retains > c.retains {
			t.Errorf("%s: a spooled scan keeps %d B per host live, want ≤ %d (issue 31: 10,000 hosts in 200 MB)", c.name, retains, c.retains)
		}
		r.Close()
	}
}
