#!/usr/bin/env bash
# Regenerates the README's and docs/report.md's picture of a report: the
# top of report.html (banner and verdict) as headless Chromium draws it.
# The report is rendered afresh from the results directory's raw data, so
# the picture is of what `meshbench report` writes today.
#
# Usage: scripts/screenshot.sh RESULTS_DIR [PNG]   (default docs/images/report-quick.png)
# Needs bin/meshbench (make build or make build-lab) and Chromium
# (scripts/setup.sh test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
	echo "usage: scripts/screenshot.sh RESULTS_DIR [PNG]" >&2
	exit 2
fi
results=$1
png=${2:-docs/images/report-quick.png}
bin=bin/meshbench
chromium=${CHROMIUM:-/usr/bin/chromium}
for x in "$bin" "$chromium"; do
	if [ ! -x "$x" ]; then
		echo "screenshot: $x is missing (make build; scripts/setup.sh test)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report "$results" --out "$tmp" >/dev/null
"$chromium" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars \
	--window-size=1280,1500 --screenshot="$tmp/report.png" "file://$tmp/report.html" 2>/dev/null
mv "$tmp/report.png" "$png"
echo "screenshot: $png, from $results"
