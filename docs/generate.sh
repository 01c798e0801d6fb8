#!/bin/sh
# Regenerates docs/demo/: the demo fleet's report in every format, rendered
# from ONE scan (so all formats agree), plus a headless-Chromium screenshot
# of the HTML report when chromium is installed.
#
#   sh docs/generate.sh            # from the repository root
#
# The demo exits 1 (it has failing findings on purpose); that is expected.
set -eu
cd "$(dirname "$0")/.."
out=docs/demo
mkdir -p "$out"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/kaudit" ./cmd/kaudit

"$bin/kaudit" demo -f json -o "$out/report.json" || [ $? -eq 1 ]
for pair in table:report.table.txt markdown:report.md html:report.html junit:report.xml prometheus:report.prom; do
	fmt=${pair%%:*}
	file=${pair#*:}
	"$bin/kaudit" report "$out/report.json" --no-color -f "$fmt" -o "$out/$file" || [ $? -eq 1 ]
done

# The pre-upgrade what-if on the same scan, a diff of two small fixture
# scans, and the example waiver file checked and applied.
"$bin/kaudit" whatif "$out/report.json" --assume-kernel 6.1.0 --assume-kafka 3.6.1,confluent:7.6.0 -o "$out/whatif.txt"
"$bin/kaudit" diff report/diff/testdata/old.json report/diff/testdata/new.json -o "$out/diff.txt"
"$bin/kaudit" waivers check docs/waivers.example.yaml > "$out/waivers-check.txt" || [ $? -eq 1 ]
"$bin/kaudit" report "$out/report.json" --no-color --waivers docs/waivers.example.yaml -o "$out/report.waived.table.txt" 2>/dev/null || [ $? -eq 1 ]

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$browser" ]; then
	profile=$(mktemp -d)
	"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--hide-scrollbars --user-data-dir="$profile" \
		--screenshot="$PWD/$out/report.png" --window-size=1400,2000 \
		"file://$PWD/$out/report.html" 2>/dev/null
	rm -rf "$profile"
else
	echo "generate.sh: no chromium found, $out/report.png not refreshed" >&2
fi
ls -l "$out"
