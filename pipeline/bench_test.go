package pipeline_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/kaudit/kaudit/audit/inventory"
	"github.com/kaudit/kaudit/pipeline"
	"github.com/kaudit/kaudit/rules"
	"github.com/kaudit/kaudit/test/simhost"
)

// benchScan runs pipeline.Audit, as kaudit scan does, over n in-process
// SSH hosts (real SSH handshakes, host keys checked, one session each):
// gather, parse, every rule, the report. It reports per-host wall time, CPU time and
// allocations. The servers run in the same process, so CPU includes the
// server side of every handshake: an upper bound for kaudit's own cost.
func benchScan(b *testing.B, n int) {
	var hosts []*simhost.Host
	for i := 0; i < n; i++ {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("b%04d", i)
		hosts = append(hosts, h)
	}
	f, err := simhost.Start(b.TempDir(), hosts)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cfg := pipeline.Config{Concurrency: 64, Profile: rules.DefaultProfile()}
	b.ReportAllocs()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := pipeline.Audit(context.Background(), f.Hosts, cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range r.Hosts {
			if h.Error != nil {
				b.Fatalf("%s: %s", h.Name, h.Error.Message)
			}
		}
	}
	b.StopTimer()
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	per := float64(b.N * n)
	b.ReportMetric(float64(wall.Microseconds())/per, "µs-wall/host")
	b.ReportMetric(float64(cpu.Microseconds())/per, "µs-cpu/host")
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms-wall/scan")
}

func BenchmarkScan100(b *testing.B)  { benchScan(b, 100) }
func BenchmarkScan1000(b *testing.B) { benchScan(b, 1000) }

// BenchmarkScanHeadOfLine: 1,000 in-process hosts, 1% of them (every
// 100th, the first at the head) authenticating and then never answering,
// scanned with a 5 s deadline. extra-deadlines is (wall with the hung
// hosts − wall without) ÷ deadline, both walls measured in the same run:
// issue 13's target is ≤ 1 (the hung hosts run beside the others, never
// in front of them).
func BenchmarkScanHeadOfLine(b *testing.B) {
	const n, deadline = 1000, 5 * time.Second
	var hosts []*simhost.Host
	for i := 0; i < n; i++ {
		h := simhost.DemoFleet()[i%7]
		h.Name = fmt.Sprintf("b%04d", i)
		if i%100 == 0 {
			h.Fault = simhost.FaultHang
		}
		hosts = append(hosts, h)
	}
	f, err := simhost.Start(b.TempDir(), hosts)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var clean, hung []int
	for i, h := range hosts {
		if h.Fault == simhost.FaultHang {
			hung = append(hung, i)
		} else {
			clean = append(clean, i)
		}
	}
	cfg := pipeline.Config{Concurrency: 64, Timeout: deadline, Profile: rules.DefaultProfile()}
	scanWall := func(idx []int, wantErrors int) time.Duration {
		sel := make([]inventory.Host, 0, len(idx))
		for _, i := range idx {
			sel = append(sel, f.Hosts[i])
		}
		start := time.Now()
		r, err := pipeline.Audit(context.Background(), sel, cfg)
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		errs := 0
		for _, h := range r.Hosts {
			if h.Error != nil {
				errs++
			}
		}
		if errs != wantErrors {
			b.Fatalf("%d hosts failed, want %d", errs, wantErrors)
		}
		return wall
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var extra float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		base := scanWall(clean, 0)
		with := scanWall(all, len(hung))
		extra += float64(with-base) / float64(deadline)
	}
	b.ReportMetric(extra/float64(b.N), "extra-deadlines")
}
