// Package image builds meshbench's container image from the running
// binary, without a container runtime, and pushes it to a registry or
// writes it as a tarball: what every app, load and probe pod of a
// Kubernetes study runs.
package image
