# meshbench's image: one static binary on distroless, which every app, load
# and probe pod of a Kubernetes study runs. Build and push it, then name it
# in the study file (platform.kubernetes.image):
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     -t ghcr.io/you/meshbench:v0.1.0 .
#   docker push ghcr.io/you/meshbench:v0.1.0
#
# or, without Docker, with ko (see .ko.yaml):
#   KO_DOCKER_REPO=ghcr.io/you VERSION=v0.1.0 ko build --bare --tags v0.1.0 ./cmd/meshbench
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/meshbench/meshbench/internal/cli.Version=${VERSION}" \
      -o /out/meshbench ./cmd/meshbench

# static: no libc, no shell; nonroot: the app listens on unprivileged ports.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/meshbench /meshbench
USER nonroot:nonroot
ENTRYPOINT ["/meshbench"]
