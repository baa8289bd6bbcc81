// Package lab implements platform.Platform on the lab (internal/platform/lab/cluster): a
// Kubernetes-like cluster on one Linux host, where workloads run as
// `meshbench app` pods behind Services and load as `meshbench load` pods.
package lab
