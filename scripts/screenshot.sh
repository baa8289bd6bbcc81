#!/usr/bin/env bash
# Regenerates the docs' pictures as headless Chromium draws them, from what
# meshbench writes or serves today:
# - a report (the README's and docs/report.md's picture): the top of
#   report.html (banner and verdict), rendered afresh from the results
#   directory's raw data;
# - the history's dashboard (docs/history.md's picture): the page
#   `meshbench history serve` serves for a history, with the series the
#   issue asks for (data-plane CPU per request and added p50) of one study.
#
# Usage: scripts/screenshot.sh RESULTS_DIR [PNG]   (default docs/images/report-quick.png)
#        scripts/screenshot.sh --history HISTORY [STUDY] [PNG]
#          (default study envoy-releases, picture docs/images/history-STUDY.png)
# Needs bin/meshbench (make build or make build-lab) and Chromium
# (scripts/setup.sh test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/screenshot.sh RESULTS_DIR [PNG] | --history HISTORY [STUDY] [PNG]"
if [ $# -lt 1 ] || { [ "$1" = --history ] && [ $# -lt 2 ]; }; then
	echo "$usage" >&2
	exit 2
fi
bin=bin/meshbench
chromium=${CHROMIUM:-/usr/bin/chromium}
for x in "$bin" "$chromium"; do
	if [ ! -x "$x" ]; then
		echo "screenshot: $x is missing (make build; scripts/setup.sh test)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$1" = --history ]; then
	db=$2
	study=${3:-envoy-releases}
	png=${4:-docs/images/history-$study.png}
	height=2200
	"$bin" history serve --history "$db" --listen 127.0.0.1:0 >"$tmp/url" 2>"$tmp/log" &
	pid=$!
	for _ in $(seq 50); do
		[ -s "$tmp/url" ] && break
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
		sleep 0.1
	done
	[ -s "$tmp/url" ] || { echo "screenshot: history serve printed no address in 5 s" >&2; cat "$tmp/log" >&2; exit 1; }
	url="$(head -1 "$tmp/url")?study=$study&metric=dp_cpu_us_per_req&metric=added:p50"
	from="$db ($url)"
else
	results=$1
	png=${2:-docs/images/report-quick.png}
	height=1500
	"$bin" report "$results" --out "$tmp" >/dev/null
	url="file://$tmp/report.html"
	from=$results
fi
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars \
	--window-size=1280,$height --screenshot="$tmp/shot.png" "$url" 2>/dev/null
mv "$tmp/shot.png" "$png"
echo "screenshot: $png, from $from"
