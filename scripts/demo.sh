#!/usr/bin/env bash
# The README's first command, `make demo` (after scripts/setup.sh and make
# build): runs the built-in quick study on the lab (the tiered graph under
# no mesh, the Istio sidecar and Istio ambient, 3 interleaved repetitions,
# then a short capacity search at an SLO; `meshbench run --study quick
# --plan` prints its estimate), renders its report and says where it is.
#
# Usage: scripts/demo.sh [extra `meshbench run` flags, such as --scale 0.5]
set -euo pipefail
cd "$(dirname "$0")/.."

bin=bin/meshbench
if [ ! -x "$bin" ]; then
	echo "demo: $bin is missing; build it with 'make build'" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root: the lab creates network namespaces and cgroups" >&2
	exit 1
fi
export MESHBENCH_BIN="$PWD/$bin"
if [ -z "${MESHBENCH_ENVOY:-}" ] && [ -x .venv/bin/envoy ]; then
	export MESHBENCH_ENVOY="$PWD/.venv/bin/envoy"
fi

# run prints the results directory on stdout; progress goes to stderr.
dir=$("$bin" run --study quick "$@")
"$bin" report "$dir"
echo
echo "demo: results in $dir"
for f in "$dir"/report.html "$dir"/report.md; do
	if [ -f "$f" ]; then echo "demo: report: $f"; fi
done
echo "demo: regenerate it any time with: $bin report $dir"
