#!/usr/bin/env bash
# Builds istiod (Istio's pilot-discovery) from the Go module proxy, for the
# control-plane study and its integration test. Istio is never linked into
# meshbench: it builds in a wrapper module of its own, whose k8s.io/*
# versions are Istio's (v0.36), not meshbench's.
#
# The proxy serves istio.io/istio only as master pseudo-versions (Istio's
# release tags lack the "v"), so the version is pinned here; it is
# istiod's version wherever meshbench records one. Build tags are the
# release build's: vtprotobuf (fast marshalling) and disable_pgv.
#
# Everything goes to a cache outside the repository:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/istiod/<version>/
#     bin/pilot-discovery
#     crds.yaml         Istio's CRDs (manifests/charts/base/files/crd-all.gen.yaml)
#     gateway-crds.yaml the Gateway API's standard CRDs, of the version Istio
#                       requires (sigs.k8s.io/gateway-api), for waypoints
#     version           the module version, one line
# The script is idempotent: it rebuilds only what is missing, and an
# interrupted build never leaves a partial binary. It prints the cache
# directory on its last line of stdout.
#
# Usage: scripts/istiod-build.sh          build what is missing
#        scripts/istiod-build.sh --dir    print the cache directory only
set -euo pipefail

ISTIO_MODULE_VERSION=${MESHBENCH_ISTIO_MODULE_VERSION:-v0.0.0-20260827124520-eed52ebb66ad}

root="${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/istiod/$ISTIO_MODULE_VERSION"
if [ "${1:-}" = "--dir" ]; then
	echo "$root"
	exit 0
fi
w="$root/src"
mkdir -p "$root/bin" "$w"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
log() { echo "istiod-build: $*" >&2; }

build_istiod() {
	cat >"$w/go.mod" <<-EOF
		module meshbench.local/istiodbin

		go 1.25.0

		require istio.io/istio $ISTIO_MODULE_VERSION
	EOF
	cat >"$w/tools.go" <<-'EOF'
		//go:build tools

		package tools

		import _ "istio.io/istio/pilot/cmd/pilot-discovery"
	EOF
	log "resolving istio.io/istio@$ISTIO_MODULE_VERSION modules"
	(cd "$w" && go mod tidy)
	log "building pilot-discovery (many minutes on a small machine)"
	rm -f "$root/bin/pilot-discovery.tmp"
	(cd "$w" && go build -trimpath -tags vtprotobuf,disable_pgv -ldflags "-s -w" \
		-o "$root/bin/pilot-discovery.tmp" istio.io/istio/pilot/cmd/pilot-discovery)
	mv "$root/bin/pilot-discovery.tmp" "$root/bin/pilot-discovery"
}

fetch_crds() {
	local d
	d=$(cd "$w" && go mod download -json "istio.io/istio@$ISTIO_MODULE_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	cp "$d/manifests/charts/base/files/crd-all.gen.yaml" "$root/crds.yaml.tmp"
	chmod u+w "$root/crds.yaml.tmp"
	mv "$root/crds.yaml.tmp" "$root/crds.yaml"
}

fetch_gateway_crds() {
	local d f
	d=$(cd "$w" && go mod download -json sigs.k8s.io/gateway-api | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	: >"$root/gateway-crds.yaml.tmp"
	for f in "$d"/config/crd/standard/gateway.networking.k8s.io_*.yaml; do
		{ echo "---"; cat "$f"; } >>"$root/gateway-crds.yaml.tmp"
	done
	mv "$root/gateway-crds.yaml.tmp" "$root/gateway-crds.yaml"
}

[ -x "$root/bin/pilot-discovery" ] || build_istiod
[ -f "$root/crds.yaml" ] || fetch_crds
[ -f "$root/gateway-crds.yaml" ] || fetch_gateway_crds
echo "$ISTIO_MODULE_VERSION" >"$root/version.tmp"
mv "$root/version.tmp" "$root/version"
echo "$root"
