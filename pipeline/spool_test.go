package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"testing"
	"time"

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

// TestScanSpoolRetainsLittle guards issue 13's 300 MB at 10,000 hosts
// (bench: BenchmarkScanRetained): a spooled scan of 140 hosts keeps under
// 14 KiB per host live once it is done (≈ 11 KB measured with the 46 rules
// before issue 30's host rules, 12.9–13.1 KB after them: each host holds one
// finding per rule, ≈ 6.6 KB of the 13 in its findings slice (pprof
// inuse_space, rules.ApplyFleet's copy), 1.3 KB in its view facts
// (report.viewFacts); holding the facts is ≈ 20 KB). Live heap after a GC is not a timing: it does not
// depend on the machine's speed or load.
func TestScanSpoolRetainsLittle(t *testing.T) {
	var sims []*simhost.Host
	for i := range 140 {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("m%03d", i)
		sims = append(sims, h)
	}
	f := startFleet(t, sims)
	cfg := pipeline.Config{Concurrency: 16, Profile: rules.DefaultProfile(), SpoolFacts: true, SpoolDir: t.TempDir()}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	r, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	defer r.Close()
	if r.Summary.Audited != len(sims) {
		t.Fatalf("%d of %d hosts audited", r.Summary.Audited, len(sims))
	}
	if per := (int64(m1.HeapAlloc) - int64(m0.HeapAlloc)) / int64(len(sims)); per > 14<<10 {
		t.Errorf("a spooled scan keeps %d B per host live, want ≤ 14 KiB (issue 13: 10,000 hosts in 300 MB)", per)
	}
}
