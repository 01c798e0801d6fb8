package bench_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit"
	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/report"
	"github.com/kaudit/kaudit/rules"
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
// It mirrors cmd/kaudit's scan until that pipeline is a library call.
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
	prof := rules.DefaultProfile()
	started := time.Now()
	results := audit.Scan(context.Background(), hosts, audit.Options{SysctlKeys: rules.SysctlKeys(), Runner: transport.NewSSH()})
	r := &report.Report{SchemaVersion: report.SchemaVersion, StartedAt: started, DurationMS: time.Since(started).Milliseconds()}
	for _, res := range results {
		h := report.Host{Name: res.Host.Name, Address: res.Host.Address, Groups: res.Host.Groups, Findings: []rules.Finding{}}
		if res.Err != nil {
			b.Fatalf("%s: %v", res.Host.Name, res.Err)
		}
		p, err := prof.With(res.Host.Profile)
		if err != nil {
			b.Fatal(err)
		}
		h.Facts = res.Facts
		h.Findings = rules.Evaluate(res.Facts, p)
		r.Hosts = append(r.Hosts, h)
	}
	report.Summarize(r)
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
	runtime.KeepAlive(results)
}
