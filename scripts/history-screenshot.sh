#!/usr/bin/env bash
# Regenerates docs/history.md's picture of the dashboard: the page
# `meshbench history serve` serves for a history, as headless Chromium
# draws it, with the series the issue asks for (data-plane CPU per request
# and added p50) of one study. The page is served afresh from the
# history, so the picture is of what the dashboard shows today.
#
# Usage: scripts/history-screenshot.sh HISTORY [STUDY] [PNG]
#   (default study envoy-releases, picture docs/images/history-envoy-releases.png)
# Needs bin/meshbench (make build or make build-lab) and Chromium
# (scripts/setup.sh test installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
	echo "usage: scripts/history-screenshot.sh HISTORY [STUDY] [PNG]" >&2
	exit 2
fi
db=$1
study=${2:-envoy-releases}
png=${3:-docs/images/history-$study.png}
bin=bin/meshbench
chromium=${CHROMIUM:-/usr/bin/chromium}
for x in "$bin" "$chromium"; do
	if [ ! -x "$x" ]; then
		echo "history-screenshot: $x is missing (make build; scripts/setup.sh test)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
"$bin" history serve --history "$db" --listen 127.0.0.1:0 >"$tmp/url" 2>"$tmp/log" &
pid=$!
for _ in $(seq 50); do
	[ -s "$tmp/url" ] && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
	sleep 0.1
done
url="$(head -1 "$tmp/url")?study=$study&metric=dp_cpu_us_per_req&metric=added:p50"
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
	--disable-component-update --disable-sync --user-data-dir="$tmp/profile" --hide-scrollbars \
	--window-size=1280,2200 --screenshot="$tmp/history.png" "$url" 2>/dev/null
mv "$tmp/history.png" "$png"
echo "history-screenshot: $png, from $db ($url)"
