#!/usr/bin/env bash
# Builds the local Kubernetes control plane that meshbench's kube
# integration tests run against: kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd and kwok (which simulates nodes and pods, since no
# kubelet can run here), all from the Go module proxy. It also fetches
# kwok's stage files and Istio's Helm charts into the same cache.
#
# Everything goes to a cache outside the repository, so that it is built
# once per machine and reused:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/k8s/<version>/
#     bin/      the five binaries
#     stages/   kwok stage files (node and pod lifecycles, fast)
#     charts    a file holding the directory of Istio's charts
# The script is idempotent: it rebuilds only what is missing. It prints the
# cache directory on its last line of stdout.
#
# Usage: scripts/k8s-testbin.sh          build what is missing
#        scripts/k8s-testbin.sh --dir    print the cache directory only
set -euo pipefail

K8S_VERSION=v1.34.4
STAGING_VERSION=v0.34.4
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
# Istio publishes no tagged Go module versions the proxy serves; pin the
# snapshot that @latest resolved to when this was written, so runs agree.
ISTIO_MODULE_VERSION=${MESHBENCH_ISTIO_MODULE_VERSION:-v0.0.0-20260827124520-eed52ebb66ad}

root="${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/k8s/$K8S_VERSION"
if [ "${1:-}" = "--dir" ]; then
	echo "$root"
	exit 0
fi
bin="$root/bin"
src="$root/src"
mkdir -p "$bin" "$src" "$root/stages"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
log() { echo "k8s-testbin: $*" >&2; }

# moddir prints the directory a module version is extracted to.
moddir() { (cd "$src" && go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'); }

build_kube() {
	local w="$src/kube"
	mkdir -p "$w"
	local gomod
	gomod=$(cd "$src" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
	{
		echo "module meshbench.local/k8stestbin"
		echo
		echo "go 1.24.0"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		# Every staging module the kubernetes module replaces with a local
		# path must be replaced by its published version instead.
		grep -E '=> \./staging/src/' "$gomod" | awk -v v="$STAGING_VERSION" '{print "replace " $1 " => " $1 " " v}'
	} >"$w/go.mod"
	cat >"$w/tools.go" <<-'EOF'
		//go:build tools

		package tools

		import (
			_ "k8s.io/kubernetes/cmd/kube-apiserver"
			_ "k8s.io/kubernetes/cmd/kube-controller-manager"
			_ "k8s.io/kubernetes/cmd/kube-scheduler"
		)
	EOF
	log "resolving k8s.io/kubernetes $K8S_VERSION modules"
	(cd "$w" && go mod tidy)
	local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34"
	log "building kube-apiserver, kube-controller-manager, kube-scheduler (several minutes)"
	# Into a scratch directory first, so that an interrupted build never
	# leaves a partial binary that the next run would take as built.
	rm -rf "$root/bin.tmp"
	mkdir -p "$root/bin.tmp"
	(cd "$w" && go build -ldflags "$ld" -o "$root/bin.tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler)
	mv "$root"/bin.tmp/* "$bin/"
	rmdir "$root/bin.tmp"
}

build_etcd() {
	local w="$src/etcd"
	mkdir -p "$w"
	cat >"$w/go.mod" <<-EOF
		module meshbench.local/etcdtestbin

		go 1.24.0

		require go.etcd.io/etcd/server/v3 $ETCD_VERSION
	EOF
	cat >"$w/tools.go" <<-'EOF'
		//go:build tools

		package tools

		import _ "go.etcd.io/etcd/server/v3"
	EOF
	log "building etcd $ETCD_VERSION"
	(cd "$w" && go mod tidy)
	(cd "$w" && go build -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$bin/etcd.tmp" "$bin/etcd"
}

build_kwok() {
	log "building kwok $KWOK_VERSION"
	GOBIN="$bin" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

fetch_stages() {
	local d
	d=$(moddir "sigs.k8s.io/kwok@$KWOK_VERSION")
	# Each stage set is a kustomize directory; kwok reads the Stage files
	# themselves, listed in its kustomization.yaml.
	for s in node/fast node/heartbeat-with-lease pod/fast; do
		for f in $(sed -n 's/^- \(.*\.yaml\)$/\1/p' "$d/kustomize/stage/$s/kustomization.yaml"); do
			cp "$d/kustomize/stage/$s/$f" "$root/stages/$f"
		done
	done
	chmod u+w "$root"/stages/*.yaml
	touch "$root/stages/.done"
}

fetch_istio_charts() {
	local d
	log "downloading istio.io/istio@$ISTIO_MODULE_VERSION for its Helm charts"
	d=$(moddir "istio.io/istio@$ISTIO_MODULE_VERSION")
	test -f "$d/manifests/charts/base/Chart.yaml"
	echo "$d/manifests/charts" >"$root/charts.tmp"
	mv "$root/charts.tmp" "$root/charts"
}

for b in kube-apiserver kube-controller-manager kube-scheduler; do
	[ -x "$bin/$b" ] || { build_kube; break; }
done
[ -x "$bin/etcd" ] || build_etcd
[ -x "$bin/kwok" ] || build_kwok
[ -f "$root/stages/.done" ] || fetch_stages
{ [ -f "$root/charts" ] && [ -d "$(cat "$root/charts")/base" ]; } || fetch_istio_charts
echo "$root"
