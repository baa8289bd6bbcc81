#!/usr/bin/env bash
# The gate on real pairs (docs/statistics.md, "Real A/A and
# injected-regression pairs"): every pairing of the A/A runs given before
# --injected, and every A/A run against every injected run, each through
# `meshbench compare --fail-on-regression` at its default gate. Prints
# the false alarms (exit 3 between A/A runs) and the injected pairings
# caught (exit 3 naming the sidecar); any other exit is printed and fails.
#
# Usage: bench/validity/pairs.sh AA_DIR... --injected INJ_DIR...
set -uo pipefail
bin=${MESHBENCH_BIN:-bin/meshbench}
aa=() inj=()
dst=aa
for a in "$@"; do
	if [ "$a" = --injected ]; then dst=inj; continue; fi
	if [ $dst = aa ]; then aa+=("$a"); else inj+=("$a"); fi
done
err=$(mktemp)
trap 'rm -f "$err"' EXIT
bad=0
gate() { # A B: the gate's exit code; 0 and 3 only
	"$bin" compare "$1" "$2" --fail-on-regression >/dev/null 2>"$err"
	local rc=$?
	if [ $rc != 0 ] && [ $rc != 3 ]; then echo "pairs: $1 $2: exit $rc: $(head -c 300 "$err")" >&2; bad=1; fi
	return $rc
}
alarms=0 pairs=0
for ((i = 0; i < ${#aa[@]}; i++)); do
	for ((j = i + 1; j < ${#aa[@]}; j++)); do
		pairs=$((pairs + 1))
		gate "${aa[i]}" "${aa[j]}"
		if [ $? = 3 ]; then alarms=$((alarms + 1)); echo "false alarm: ${aa[i]} ${aa[j]}: $(cut -c1-400 "$err")"; fi
	done
done
echo "A/A: $alarms false alarm(s) in $pairs pairing(s)"
caught=0 n=0
for a in "${aa[@]}"; do
	for b in "${inj[@]}"; do
		n=$((n + 1))
		gate "$a" "$b"
		if [ $? = 3 ] && grep -q sidecar "$err"; then caught=$((caught + 1)); else echo "missed: $a $b"; fi
	done
done
[ $n -gt 0 ] && echo "injected: caught in $caught of $n pairing(s)"
exit $bad
