package bench_test

import (
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/facts"
	"github.com/kaudit/kaudit/audit/gather"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// output is one recorded gather output: what a host sent back, byte for byte.
type output struct {
	name, marker string
	stdout       []byte
}

// demoOutputs renders the gather output of each of the demo fleet's hosts,
// exactly the bytes the simulated hosts send to `kaudit scan`.
func demoOutputs(tb testing.TB) []output {
	keys := ""
	for _, k := range rules.SysctlKeys() {
		keys += k + " "
	}
	var outs []output
	for _, h := range simhost.DemoFleet() {
		m := gather.NewMarker()
		outs = append(outs, output{name: h.Name, marker: m, stdout: []byte(h.Render(m, keys))})
	}
	if len(outs) == 0 {
		tb.Fatal("no demo hosts")
	}
	return outs
}

// TestDemoOutputsParse keeps the benchmarks honest: every recorded output
// parses and yields findings, so the benchmarks below time real work.
func TestDemoOutputsParse(t *testing.T) {
	for _, o := range demoOutputs(t) {
		f, err := gather.Parse(o.stdout, o.marker, 9092)
		if err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		if f.Kernel.Release == "" {
			t.Errorf("%s: kernel release not parsed", o.name)
		}
		if n := len(rules.Evaluate(f, rules.DefaultProfile())); n < 10 {
			t.Errorf("%s: %d findings, want every rule's", o.name, n)
		}
	}
}

// BenchmarkParseEvaluate is the per-host cost of turning a gather output
// into findings: split, parse every section, evaluate every rule. One op
// is one host (the demo profiles in turn).
func BenchmarkParseEvaluate(b *testing.B) {
	outs := demoOutputs(b)
	prof := rules.DefaultProfile()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := outs[i%len(outs)]
		f, err := gather.Parse(o.stdout, o.marker, 9092)
		if err != nil {
			b.Fatal(err)
		}
		rules.Evaluate(f, prof)
	}
}

// BenchmarkParse is the parse half of BenchmarkParseEvaluate.
func BenchmarkParse(b *testing.B) {
	outs := demoOutputs(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := outs[i%len(outs)]
		if _, err := gather.Parse(o.stdout, o.marker, 9092); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate is the rule half: every rule on already parsed facts.
func BenchmarkEvaluate(b *testing.B) {
	fs := parsed(b)
	prof := rules.DefaultProfile()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rules.Evaluate(fs[i%len(fs)], prof)
	}
}

// BenchmarkReportJSON1000 is the JSON report's cost (facts and findings
// included): one op renders a 1,000-host report; µs/host and B/host are
// reported beside the per-op figures.
func BenchmarkReportJSON1000(b *testing.B) {
	fs := parsed(b)
	r := &report.Report{SchemaVersion: report.SchemaVersion, StartedAt: time.Now()}
	for i := 0; i < 1000; i++ {
		f := fs[i%len(fs)]
		r.Hosts = append(r.Hosts, report.Host{Name: "h", Address: "127.0.0.1", Facts: f, Findings: rules.Evaluate(f, rules.DefaultProfile())})
	}
	report.Summarize(r)
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := report.Render(io.Discard, "json", r, report.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	hosts := float64(b.N * len(r.Hosts))
	b.ReportMetric(float64(time.Since(start).Microseconds())/hosts, "µs/host")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/hosts, "B/host")
}

func parsed(b *testing.B) []*facts.Facts {
	var fs []*facts.Facts
	for _, o := range demoOutputs(b) {
		f, err := gather.Parse(o.stdout, o.marker, 9092)
		if err != nil {
			b.Fatal(err)
		}
		fs = append(fs, f)
	}
	return fs
}
