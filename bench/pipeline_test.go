package bench_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/audit/transport"
	"github.com/kaudit/kaudit/pipeline"
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
// It runs pipeline.Scan and report.Render, as cmd/kaudit's scan does.
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
	r, err := pipeline.Scan(context.Background(), hosts, pipeline.Config{Profile: rules.DefaultProfile(), Runner: transport.NewSSH()})
	if err != nil {
		b.Fatal(err)
	}
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
