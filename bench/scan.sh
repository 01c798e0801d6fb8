#!/usr/bin/env bash
# Fan-out benchmark: scan 100 and 1,000 in-process SSH hosts (real SSH
# handshakes with host keys checked, one session and one gather per host,
# every rule evaluated, the report built). Prints ns/op, allocs and the per-host metrics.
# Usage: bench/scan.sh [count]   (default 3 runs each, for benchstat)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
go test -run '^$' -bench 'BenchmarkScan(100|1000)$' -benchtime 1x -count "${1:-3}" ./pipeline/
