#!/usr/bin/env bash
# kaudit scan's peak RSS per report format: a simulated fleet of N hosts
# (bench/simfleet, its own process), then one `kaudit scan -f FORMAT -o
# FILE` per format under /usr/bin/time -v (maximum resident set size,
# wall, user+sys CPU).
#
#   bench/scan-rss.sh                        # N = 10000, json table html
#   bench/scan-rss.sh -n 1000 -f "json html" -o /tmp/scan-rss
#
# Results: OUT/table.md (printed) and OUT/time-FORMAT.txt. Loopback only;
# simfleet is ended by PID on exit (trap).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N=10000
FORMATS="json table html"
OUT=""
while getopts "n:f:o:h" opt; do
	case $opt in
	n) N=$OPTARG ;;
	f) FORMATS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) sed -n '2,12p' "$0"; exit 2 ;;
	esac
done
ulimit -n "$(ulimit -Hn)"
WORK=$(mktemp -d /tmp/kbench-scanrss.XXXXXX)
OUT=${OUT:-bench/results/scan-rss-$(date -u +%F-%H%M)}
mkdir -p "$OUT"
SIM=""
cleanup() {
	set +e
	[ -n "$SIM" ] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

COMMIT=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo +dirty) # what is built
go build -o "$WORK/kaudit" ./cmd/kaudit
go build -o "$WORK/simfleet" ./bench/simfleet
"$WORK/simfleet" -hosts "$N" -out "$WORK/f" >"$WORK/simfleet.log" 2>&1 &
SIM=$!
for _ in $(seq 1 6000); do
	grep -q "hosts ready" "$WORK/simfleet.log" && break
	kill -0 "$SIM" 2>/dev/null || { cat "$WORK/simfleet.log" >&2; exit 1; }
	sleep 0.1
done

{
	echo "| hosts | format | peak RSS MB | wall s | CPU s | report MB | hosts audited |"
	echo "|---:|---|---:|---:|---:|---:|---|"
} >"$OUT/table.md"
for f in $FORMATS; do
	t=$OUT/time-$f.txt
	/usr/bin/time -v "$WORK/kaudit" scan "$WORK/f/inventory.yaml" -f "$f" -o "$WORK/report.$f" 2>"$t" || true
	rss=$(awk -F': ' '/Maximum resident set size/ {print int($2 / 1024)}' "$t")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; printf "%.1f", s}' "$t")
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$t")
	size=$(($(stat -c %s "$WORK/report.$f" 2>/dev/null || echo 0) / 1048576))
	# the report's own count: JSON's summary, the table's and HTML's header
	audited=$(head -c 65536 "$WORK/report.$f" 2>/dev/null |
		grep -o '"audited": *[0-9]*\|[0-9][0-9,]* audited' | head -1 | tr -dc '0-9' || true)
	printf '| %d | %s | %s | %s | %s | %d | %s |\n' "$N" "$f" "$rss" "$wall" "$cpu" "$size" "${audited:-?}" >>"$OUT/table.md"
done
echo >>"$OUT/table.md"
echo "bench/scan-rss.sh -n $N -f \"$FORMATS\", $(date -u '+%F %H:%M') UTC, commit $COMMIT, $(nproc) cores" >>"$OUT/table.md"
cat "$OUT/table.md"
