package report

import "testing"

// demoReport is the demo fleet's scan: a copy of docs/demo/report.json
// (docs/generate.sh) with its times zeroed; ten hosts, one unreachable,
// one producer.
const demoReport = "testdata/demo.json"

// simulatedFleet is Simulated from the demo's scan.
func simulatedFleet(t testing.TB, n, clusters int) *Report {
	t.Helper()
	demo, err := Load(demoReport)
	if err != nil {
		t.Fatal(err)
	}
	return Simulated(demo, n, clusters)
}
