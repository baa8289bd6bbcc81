#!/usr/bin/env bash
# Benchmarks meshbench's load engine against its peers on this machine:
# client CPU per request, the stall (coordinated omission) test, pacing
# precision and memory. Not part of `make test`.
#
#   bash bench/load/run.sh            # the default benchmark, a few minutes
#   bash bench/load/run.sh -long      # adds the 10-million-request memory run
#   bash bench/load/run.sh -only cpu  # some parts: cpu,stall,precision,memory,protocols
#
# Peers are installed once into a cache directory: wrk, hey and h2load
# (Debian's nghttp2-client) from apt, oha with cargo (slow; skipped with a
# note if it fails), fortio, vegeta and ghz from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/../.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/peers"
mkdir -p "$cache/bin"
note() { echo "run.sh: $*" >&2; }

for tool in nginx wrk hey taskset h2load; do
	if ! command -v "$tool" >/dev/null; then
		pkg=$tool
		[ "$tool" = taskset ] && pkg=util-linux
		[ "$tool" = h2load ] && pkg=nghttp2-client
		note "installing $pkg from apt"
		apt-get install -y "$pkg" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$pkg" >/dev/null; }
	fi
done

oha="$(command -v oha || true)"
[ -z "$oha" ] && [ -x "$cache/oha/bin/oha" ] && oha="$cache/oha/bin/oha"
if [ -z "$oha" ]; then
	if command -v cargo >/dev/null; then
		note "installing oha with cargo into $cache/oha (several minutes, once)"
		if cargo install oha --locked --root "$cache/oha" >"$cache/oha-install.log" 2>&1; then
			oha="$cache/oha/bin/oha"
		else
			note "oha did not install (see $cache/oha-install.log); it is left out"
		fi
	else
		note "no cargo: oha is left out"
	fi
fi

fortio="$cache/bin/fortio"
if [ ! -x "$fortio" ]; then
	note "installing fortio v1.68.2"
	GOBIN="$cache/bin" go install fortio.org/fortio@v1.68.2 || { note "fortio did not install; it is left out"; fortio=""; }
fi

vegeta="$cache/bin/vegeta"
if [ ! -x "$vegeta" ]; then
	note "building vegeta v12.13.0 in a temporary module"
	tmp="$(mktemp -d)"
	(
		cd "$tmp"
		printf 'module vegetawrap\n\ngo 1.22\n\nrequire github.com/tsenart/vegeta/v12 v12.13.0\n' >go.mod
		GOFLAGS=-mod=mod go build -o "$vegeta" github.com/tsenart/vegeta/v12
	) || { note "vegeta did not build; it is left out"; vegeta=""; }
	rm -rf "$tmp"
fi

ghz="$cache/bin/ghz"
if [ ! -x "$ghz" ]; then
	note "building ghz v0.120.0 in a temporary module"
	tmp="$(mktemp -d)"
	(
		cd "$tmp"
		printf 'module ghzwrap\n\ngo 1.22\n\nrequire github.com/bojand/ghz v0.120.0\n' >go.mod
		GOFLAGS=-mod=mod go build -o "$ghz" github.com/bojand/ghz/cmd/ghz
	) || { note "ghz did not build; gRPC is compared with no peer"; ghz=""; }
	rm -rf "$tmp"
fi

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$bin/meshbench" ./cmd/meshbench
CGO_ENABLED=0 go build -o "$bin/loadbench" ./bench/load
CGO_ENABLED=0 go build -trimpath -o "$bin/grpcref" ./bench/grpcref
CGO_ENABLED=0 go build -trimpath -o "$bin/floor" ./bench/load/floor

"$bin/loadbench" -meshbench "$bin/meshbench" -wrk "$(command -v wrk)" -hey "$(command -v hey)" \
	-oha "$oha" -fortio "$fortio" -vegeta "$vegeta" -floor "$bin/floor" -floor-uring "$bin/floor" \
	-h2load "$(command -v h2load)" -ghz "$ghz" -grpcref "$bin/grpcref" "$@"
