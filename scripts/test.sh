#!/usr/bin/env bash
# Runs meshbench's whole test suite: unit tests, then the integration tests
# (root, network namespaces, Envoy, a local Kubernetes control plane) one
# package at a time, since they share the machine's CPUs and namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
export MESHBENCH_ENVOY="$PWD/.venv/bin/envoy"
export MESHBENCH_BIN="$PWD/bin/meshbench"
go test -short -count=1 ./...
# The Kubernetes integration tests run against a control plane built from
# the Go module proxy; the build is cached outside the clone, so only the
# first run on a machine pays for it.
scripts/k8s-testbin.sh >/dev/null
go test -count=1 -p 1 -timeout 75m -run 'Integration' ./...
