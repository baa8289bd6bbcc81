# meshbench build, set-up and tests. `make demo` and `make test` are the
# README's two commands; .ci/run runs `make test`.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X github.com/meshbench/meshbench/internal/cli.Version=$(VERSION) -X github.com/meshbench/meshbench/internal/cli.Commit=$(COMMIT)
export CGO_ENABLED := 0

.PHONY: build build-lab setup setup-demo demo test test-short vet fmt clean
build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o bin/meshbench ./cmd/meshbench

# The demo runs on the lab only, so it builds without the Kubernetes
# platform: client-go and Helm are two thirds of the packages a cold build
# compiles. `make build` writes the whole binary over it.
build-lab:
	go build -tags labonly -trimpath -ldflags '$(LDFLAGS) -X github.com/meshbench/meshbench/internal/cli.Version=$(VERSION)+labonly' -o bin/meshbench ./cmd/meshbench

setup:
	./scripts/setup.sh test

# The demo installs only what it needs: no browser, no nginx.
setup-demo:
	./scripts/setup.sh demo

demo: setup-demo build-lab
	./scripts/demo.sh

vet:
	go vet ./...
	go vet -tags labonly ./internal/cli
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt needed'; exit 1; }

test-short:
	go test -short ./...

test: setup build vet
	./scripts/test.sh

clean:
	rm -rf bin
