// Package bench_test holds kaudit's whole-pipeline benchmarks: the per-host
// cost of parsing a gather output and evaluating every rule, the JSON
// report's per-host cost, and a scan of an external bench/simfleet fleet
// (the client alone, profiled with -cpuprofile/-memprofile). Speed targets
// live here, never in timed unit tests. See bench/README.md.
package bench_test
