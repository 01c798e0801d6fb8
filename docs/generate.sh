#!/bin/sh
# Regenerates docs/demo/: the demo fleet's report in every format, rendered
# from ONE scan (so all formats agree), plus headless-Chromium screenshots
# of the HTML report and of the terminal at 80 and 120 columns when
# chromium (and tmux) are installed.
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
"$bin/kaudit" report "$out/report.json" --no-color -v -o "$out/report.verbose.table.txt" || [ $? -eq 1 ]

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
# shot FILE.html FILE.png WIDTH HEIGHT: a headless-Chromium screenshot.
shot() {
	profile=$(mktemp -d)
	"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--hide-scrollbars --user-data-dir="$profile" \
		--screenshot="$2" --window-size="$3,$4" "file://$1" 2>/dev/null
	rm -rf "$profile"
}
if [ -n "$browser" ]; then
	shot "$PWD/$out/report.html" "$PWD/$out/report.png" 1400 2000
else
	echo "generate.sh: no chromium found, $out/report.png not refreshed" >&2
fi

# The terminal at 80 and 120 columns: kaudit demo in a tmux pane of that
# width (kaudit reads the width from the tty and colours), captured with
# its colours (capture-pane -e), turned into HTML by docs/termshot and
# screenshotted: docs/terminal-80.png, docs/terminal-120.png.
if [ -n "$browser" ] && command -v tmux >/dev/null; then
	go build -o "$bin/termshot" ./docs/termshot
	for cols in 80 120; do
		sock="$bin/tmux.sock"
		tmux -S "$sock" -f /dev/null new-session -d -x "$cols" -y 150 -s shot \
			"env -u COLUMNS -u NO_COLOR -u CLICOLOR_FORCE $bin/kaudit demo; tmux -S $sock wait-for -S done; sleep 60"
		tmux -S "$sock" wait-for done
		tmux -S "$sock" capture-pane -e -p -S 0 -E - -t shot | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$bin/pane.txt"
		tmux -S "$sock" kill-server
		rows=$(grep -c '' "$bin/pane.txt")
		"$bin/termshot" -cols "$cols" -title "kaudit demo at $cols columns" < "$bin/pane.txt" > "$bin/pane.html"
		# 14px DejaVu Sans Mono: 8.43px a column, 18.2px a line, 12/16px padding.
		shot "$bin/pane.html" "$PWD/docs/terminal-$cols.png" $((cols * 843 / 100 + 34)) $((rows * 182 / 10 + 26))
	done
else
	echo "generate.sh: no chromium or tmux, docs/terminal-*.png not refreshed" >&2
fi
ls -l "$out"
