// Package kube runs studies on a real Kubernetes cluster, installing meshes from their Helm charts.
package kube
