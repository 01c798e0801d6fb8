#!/usr/bin/env bash
# kaudit serve's memory over scans: for each N, a simulated fleet of N
# hosts (bench/simfleet, its own process), kaudit serve scanning it back
# to back (--interval 1s), and the server's RSS read from /proc after each
# of SCANS scans (0.5 s after its "scan done" line, between two scans),
# with its peak (VmHWM) and the connections it kept.
#
#   bench/serve.sh                          # N = 1000 10000, 10 scans each
#   bench/serve.sh -n 1000 -s 5 -o /tmp/serve-bench
#   bench/serve.sh -k false                 # --keep-connections=false
#   bench/serve.sh -p 2322                  # simfleet's port (default 2222, in use?)
#
# Results: OUT/table.md (printed), OUT/rss-N.tsv (scan, seconds, RSS KiB)
# and OUT/serve-N.log (serve's stderr). Loopback only; the simulated
# hosts and kaudit serve are ended by PID on exit (trap), also on Ctrl-C.
# Each host needs ≈ 2 open files on each side: the script raises its own
# soft limit to the hard one (both processes inherit it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

NS_LIST="1000 10000"
SCANS=10
OUT=""
KEEP=true
PORT=2222
while getopts "n:s:o:k:p:h" opt; do
	case $opt in
	n) NS_LIST=$OPTARG ;;
	s) SCANS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	p) PORT=$OPTARG ;;
	*) sed -n '2,18p' "$0"; exit 2 ;;
	esac
done
ulimit -n "$(ulimit -Hn)"
WORK=$(mktemp -d /tmp/kbench-serve.XXXXXX)
OUT=${OUT:-bench/results/serve-$(date -u +%F)}
mkdir -p "$OUT"
PIDS=()
cleanup() {
	set +e
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo +dirty) # what is built
go build -o "$WORK/kaudit" ./cmd/kaudit
go build -o "$WORK/simfleet" ./bench/simfleet

kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }

# waitline FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching PATTERN.
waitline() {
	local i=0 n
	while n=$(grep -c -- "$2" "$1" 2>/dev/null || true); [ "${n:-0}" -lt "$3" ]; do
		i=$((i + 1))
		[ "$i" -le $(($4 * 10)) ] || { echo "serve.sh: no '$2' #$3 in $1 within $4 s" >&2; tail -5 "$1" >&2; exit 1; }
		sleep 0.1
	done
}

{
	printf '| hosts | keep |'
	for s in $(seq 1 "$SCANS"); do printf ' RSS MB after scan %d |' "$s"; done
	printf ' peak (VmHWM) MB | last / first | kept | scan time (first, last) |\n|---|---|'
	for s in $(seq 1 "$SCANS"); do printf -- '---|'; done
	printf -- '---|---|---|---|\n'
} >"$OUT/table.md"
for n in $NS_LIST; do
	fleet=$WORK/f$n
	"$WORK/simfleet" -hosts "$n" -port "$PORT" -out "$fleet" >"$WORK/simfleet-$n.log" 2>&1 &
	sim=$!
	PIDS+=("$sim")
	waitline "$WORK/simfleet-$n.log" "hosts ready" 1 600
	log=$OUT/serve-$n.log
	"$WORK/kaudit" serve --interval 1s --jitter 0 --listen 127.0.0.1:0 --keep-connections="$KEEP" \
		--concurrency 64 --state-dir "$WORK/state-$n" "$fleet/inventory.yaml" >"$log" 2>&1 &
	srv=$!
	PIDS+=("$srv")
	rows=""
	first=""
	: >"$OUT/rss-$n.tsv"
	start=$(date +%s)
	for s in $(seq 1 "$SCANS"); do
		waitline "$log" "scan done in" "$s" 3600
		sleep 0.5 # the previous report is released before the line (after it while a render reads it); the next scan starts 1 s after it
		rss=$(kib "$srv" VmRSS)
		[ -n "$first" ] || first=$rss
		printf '%d\t%d\t%d\n' "$s" "$(($(date +%s) - start))" "$rss" >>"$OUT/rss-$n.tsv"
		rows="$rows $((rss / 1024)) |"
	done
	hwm=$(kib "$srv" VmHWM)
	kept=$(grep -o 'keeps [0-9]* of [0-9]* SSH connections\|connections are not kept' "$log" | tail -1 || true)
	durs=$(grep -o 'scan done in [^:]*' "$log" | sed -n "1p;${SCANS}p" | awk '{print $4}' | paste -sd, - || true)
	printf '| %d | %s |%s %d | %s | %s | %s |\n' "$n" "$KEEP" "$rows" "$((hwm / 1024))" \
		"$(awk -v a="$first" -v b="$rss" 'BEGIN{printf "%.2f", b/a}')" "${kept:-?}" "$durs" >>"$OUT/table.md"
	kill "$srv" "$sim"
	wait "$srv" "$sim" 2>/dev/null || true
done
{
	echo
	echo "bench/serve.sh -n \"$NS_LIST\" -s $SCANS -k $KEEP, $(date -u '+%F %H:%M') UTC, commit $COMMIT, $(nproc) cores"
} >>"$OUT/table.md"
cat "$OUT/table.md"
