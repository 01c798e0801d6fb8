package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// longIDReport is the fixture fleet with a cluster whose id is n bytes
// and whose brokers are in no inventory, each named in a broker-unaudited
// problem that quotes the id, as discover.Map words it (issue 34 row 7: a
// 200 KB id on 20 brokers took 24 s in the table).
func longIDReport(tb testing.TB, n, brokers int) *Report {
	r, err := Load(fixturePath)
	if err != nil {
		tb.Fatal(err)
	}
	id := strings.Repeat("A", n)
	c := &Cluster{ID: id, Bootstrap: "b:9092"}
	for i := range brokers {
		adv := fmt.Sprintf("kafka-%d.internal:9092", i)
		c.Brokers = append(c.Brokers, ClusterBroker{NodeID: int32(i), Advertised: adv})
		c.Problems = append(c.Problems, ClusterProblem{Rule: "broker-unaudited", Severity: "high", NodeID: int32(i),
			Message: fmt.Sprintf("broker %d (%s) is in cluster %s but in no inventory: nothing about it was checked", i, adv, id)})
	}
	r.Cluster = c
	return r
}

// BenchmarkTableLongClusterID renders the default table (80 columns, and
// -v) of a report whose cluster id is 200 KB, on 20 brokers, and 1 MB.
func BenchmarkTableLongClusterID(b *testing.B) {
	for _, tc := range []struct {
		name       string
		n, brokers int
		verbose    bool
	}{{"200KB-20brokers", 200 << 10, 20, false}, {"200KB-20brokers-v", 200 << 10, 20, true}, {"1MB-2brokers", 1 << 20, 2, false}} {
		r := longIDReport(b, tc.n, tc.brokers)
		b.Run(tc.name, func(b *testing.B) {
			var out bytes.Buffer
			for i := 0; i < b.N; i++ {
				out.Reset()
				if err := Render(&out, "table", r, Options{Width: 80, Verbose: tc.verbose}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len()), "output-bytes")
		})
	}
}

// BenchmarkTableLongHostValues renders the table (80 columns, and -v) of
// the fixture fleet whose every finding observed a 200 KB value and
// whose kernel release is one: the grid measures each cell once and
// starts a shrinkable column at the grid's width (it shrank a 200 KB
// column one column at a time, re-measuring every cell: minutes).
func BenchmarkTableLongHostValues(b *testing.B) {
	r, err := Load(fixturePath)
	if err != nil {
		b.Fatal(err)
	}
	big := strings.Repeat("B", 200<<10)
	for i := range r.Hosts {
		for j := range r.Hosts[i].Findings {
			r.Hosts[i].Findings[j].Observed, r.Hosts[i].Findings[j].Reason = big, big
		}
		if r.Hosts[i].Facts != nil {
			r.Hosts[i].Facts.Kernel.Release = big
		}
	}
	for _, verbose := range []bool{false, true} {
		b.Run(fmt.Sprintf("verbose=%v", verbose), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := Render(io.Discard, "table", r, Options{Width: 80, Verbose: verbose}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
