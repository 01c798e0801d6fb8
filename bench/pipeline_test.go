package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
	"github.com/kaudit/kaudit/whatif"
)

// BenchmarkFleet scans the fleet of a running bench/simfleet (its
// inventory in KAUDIT_BENCH_INVENTORY) the way `kaudit scan -f json` does:
// load, gather, evaluate, score, render the JSON report to a file. The
// servers live in another process, so -cpuprofile and -memprofile show the
// client alone:
//
//	go run ./bench/simfleet -hosts 10000 -out /tmp/f &
//	KAUDIT_BENCH_INVENTORY=/tmp/f/inventory.yaml go test -run '^$' \
//	    -bench Fleet -benchtime 1x -cpuprofile cpu.out -memprofile mem.out ./bench/
//
// It runs pipeline.Audit (facts spooled, pipeline.SpoolFor) and
// report.Render, as cmd/kaudit's scan does.
func BenchmarkFleet(b *testing.B) {
	path := os.Getenv("KAUDIT_BENCH_INVENTORY")
	if path == "" {
		b.Skip("KAUDIT_BENCH_INVENTORY is not set (start bench/simfleet first)")
	}
	inv, err := inventory.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	hosts, err := inv.Select("")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scanFleet(b, hosts, filepath.Join(b.TempDir(), "r.json"))
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	per := float64(b.N * len(hosts))
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	b.ReportMetric(float64(time.Since(start).Microseconds())/per, "µs-wall/host")
	b.ReportMetric(float64(cpu.Microseconds())/per, "µs-cpu/host")
	b.ReportMetric(float64(ru1.Maxrss)/1024, "MiB-maxrss")
}

func scanFleet(b *testing.B, hosts []inventory.Host, out string) {
	cfg := pipeline.Config{Profile: rules.DefaultProfile(), Runner: transport.NewSSH(), SpoolFacts: pipeline.SpoolFor(whatif.Assume{}, hosts)}
	r, err := pipeline.Audit(context.Background(), hosts, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, h := range r.Hosts {
		if h.Error != nil {
			b.Fatalf("%s: %s", h.Name, h.Error.Message)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	if err := report.Render(w, "json", r, report.Options{}); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScanRetained is what a finished scan of 1,000 in-process
// simulated hosts (the demo profiles in turn) keeps in memory until its
// report is written: live heap after the scan, with the report alive,
// minus before, per host (B-retained/host), with the facts held in the
// report ("held", every format) and spooled ("spooled", kaudit scan -f
// json). The 10,000-host scan's peak RSS follows it: ≈ 2× (GOGC=100)
// 10,000 × it, plus the hosts in flight and the runtime. issue 13's 300 MB
// at 10,000 hosts needs spooled well under 10 KB/host.
func BenchmarkScanRetained(b *testing.B) {
	const n = 1000
	var sims []*simhost.Host
	for i := range n {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("r%04d", i)
		sims = append(sims, h)
	}
	f, err := simhost.Start(b.TempDir(), sims)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, spool := range []bool{false, true} {
		name := map[bool]string{false: "held", true: "spooled"}[spool]
		b.Run(name, func(b *testing.B) {
			cfg := pipeline.Config{Concurrency: 64, Profile: rules.DefaultProfile(), SpoolFacts: spool, SpoolDir: b.TempDir()}
			var retained float64
			for range b.N {
				retained += retainedPerHost(b, f.Hosts, cfg)
			}
			b.ReportMetric(retained/float64(b.N), "B-retained/host")
		})
	}
}

// retainedPerHost scans hosts and returns the live heap the report holds, per host.
func retainedPerHost(b *testing.B, hosts []inventory.Host, cfg pipeline.Config) float64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	r, err := pipeline.Audit(context.Background(), hosts, cfg)
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	for _, h := range r.Hosts {
		if h.Error != nil {
			b.Fatalf("%s: %s", h.Name, h.Error.Message)
		}
		if cfg.SpoolFacts != (h.Spooled != nil) {
			b.Fatalf("%s: spooled %v, want %v", h.Name, h.Spooled != nil, cfg.SpoolFacts)
		}
	}
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
	return float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(len(hosts))
}
