#!/usr/bin/env bash
# Runs meshbench's whole test suite: unit tests; the concurrent packages
# under the race detector; each fuzz target for a bounded time; then the
# integration tests (root, network namespaces, Envoy, a local Kubernetes
# control plane) one package at a time, since they share the machine's CPUs
# and namespaces, with a per-package count of what ran; last, the
# host-path test again in a cgroup v2 VM (scripts/vmhost.sh).
#
# A missing integration prerequisite fails the run (make test installs
# them all through scripts/setup.sh): MESHBENCH_REQUIRE_INTEGRATION=0 lets
# such tests skip instead, for a machine that cannot run them. The
# history's PostgreSQL tests run against a private server this script
# starts (initdb into a temporary directory, a Unix socket there and no
# TCP port) and stops at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export MESHBENCH_ENVOY="${MESHBENCH_ENVOY:-$PWD/.venv/bin/envoy}"
export MESHBENCH_BIN="${MESHBENCH_BIN:-$PWD/bin/meshbench}"
export MESHBENCH_REQUIRE_INTEGRATION="${MESHBENCH_REQUIRE_INTEGRATION:-1}"
FUZZTIME="${FUZZTIME:-15s}"

stage() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
took() { printf '== %s took %ds\n' "$1" $((SECONDS - $2)); }

stage "unit tests"
t=$SECONDS
go test -short -count=1 ./...
took "unit tests" $t

# The race detector needs cgo (the Makefile builds static binaries with
# CGO_ENABLED=0) and a C compiler, which scripts/setup.sh installs.
stage "race detector"
t=$SECONDS
CGO_ENABLED=1 go test -race -short -count=1 \
	./internal/load/... ./internal/app/... ./internal/platform/lab/cluster/... \
	./internal/study/... ./internal/analysis/... ./internal/results/... ./internal/xdsload/... \
	./internal/platform/lab/dataplane/xdsrelay/... ./internal/platform/lab/dataplane/sds/...
took "race detector" $t

# Each fuzz target runs for $FUZZTIME from its seed corpus
# (testdata/fuzz/FuzzX); a crasher it finds is written there and fails
# the run.
stage "fuzzing, $FUZZTIME per target"
t=$SECONDS
fuzz=(
	"./internal/http1wire FuzzResponse"
	"./internal/http1wire FuzzRequest"
	"./internal/load FuzzHTTP2Response"
	"./internal/study FuzzParse"
	"./internal/results FuzzRead"
	"./internal/cost FuzzLoadCatalog"
)
for f in "${fuzz[@]}"; do
	set -- $f
	go test -run='^$' -fuzz="^$2\$" -fuzztime="$FUZZTIME" "$1"
done
took "fuzzing" $t

# The Kubernetes integration tests run against a control plane built from
# the Go module proxy; the build is cached outside the clone, so only the
# first run on a machine pays for it.
stage "control plane for the Kubernetes tests"
t=$SECONDS
scripts/k8s-testbin.sh >/dev/null
took "control plane" $t

# istiod (Istio's pilot-discovery) for the control-plane study's test,
# built from the Go module proxy in a module of its own and cached the same
# way.
stage "istiod for the control-plane study"
t=$SECONDS
scripts/istiod-build.sh >/dev/null
took "istiod" $t

# A private PostgreSQL for the history's tests: its own cluster in a
# temporary directory, listening on a Unix socket there only, fsync off (it
# holds nothing worth keeping), as the postgres user when run as root
# (initdb refuses root). Without a server, MESHBENCH_POSTGRES stays unset
# and the PostgreSQL test reports the missing prerequisite (failing in
# CI).
pg_dir=
pg_bin=
pg_as() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_stop() {
	[ -n "$pg_dir" ] || return 0
	pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$pg_dir"
	pg_dir=
}
trap pg_stop EXIT
stage "PostgreSQL for the history's tests"
t=$SECONDS
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -x "$pg_bin/initdb" ] && { [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; }; then
	pg_dir=$(mktemp -d /tmp/meshbench-pg.XXXXXX)
	[ "$(id -u)" = 0 ] && chown postgres: "$pg_dir"
	pg_as "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U postgres --no-sync >"$pg_dir/initdb.log" 2>&1
	pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w \
		-o "-k $pg_dir -c listen_addresses= -c fsync=off -c full_page_writes=off" start >/dev/null
	export MESHBENCH_POSTGRES="postgres://postgres@/postgres?host=$pg_dir"
	echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on $pg_dir"
else
	echo "test.sh: no PostgreSQL server (scripts/setup.sh test installs postgresql): the history's PostgreSQL test will report it" >&2
fi
took "PostgreSQL" $t

stage "integration tests (MESHBENCH_REQUIRE_INTEGRATION=$MESHBENCH_REQUIRE_INTEGRATION)"
t=$SECONDS
strict=()
[ "$MESHBENCH_REQUIRE_INTEGRATION" = 1 ] && strict=(-strict)
go build -o bin/testsummary ./internal/testenv/testsummary
set +e
go test -json -count=1 -p 1 -timeout 75m -run 'Integration' ./... | bin/testsummary "${strict[@]}"
rc=("${PIPESTATUS[@]}")
set -e
took "integration tests" $t

# The host users have: TestIntegrationHostPath (the demo's path, then lab
# down and kill -9 leaving nothing), which ran above on this host, runs
# again in a Debian 12 guest with its stock kernel, systemd as PID 1 and
# cgroup v2, from a login session through sudo (scripts/vmhost.sh; the
# image is cached outside the clone). It fails, never skips, when qemu,
# the kernel or the root file system cannot be had, and vmhost.sh stops
# the VM at its timeout or on any failure.
stage "cgroup v2 host: TestIntegrationHostPath in a Debian 12 VM under systemd"
t=$SECONDS
vmout=$(mktemp -d "${TMPDIR:-/tmp}/meshbench-vm.XXXXXX")
set +e
(
	set -e
	scripts/vmhost.sh build >/dev/null
	CGO_ENABLED=0 go test -c -o bin/cli.test ./internal/cli
	scripts/vmhost.sh run --bin "$MESHBENCH_BIN" --file bin/cli.test --out "$vmout" --timeout 2400 \
		--env MESHBENCH_REQUIRE_INTEGRATION=1 -- \
		sh -c 'cd internal/cli && exec /opt/meshbench/cli.test -test.run "^TestIntegrationHostPath\$" -test.v -test.timeout 35m'
)
vmrc=$?
set -e
took "cgroup v2 host" $t
if [ "$vmrc" = 0 ]; then
	rm -rf "$vmout"
else
	echo "test.sh: the cgroup v2 host's test failed (exit $vmrc); its output and console are in $vmout" >&2
fi

if [ "${rc[0]}" != 0 ] || [ "${rc[1]}" != 0 ]; then
	echo "test.sh: integration tests failed (go test exit ${rc[0]}, summary exit ${rc[1]})" >&2
	exit 1
fi
[ "$vmrc" = 0 ] || exit 1
