// Package platform defines what the study runner needs from a place to run
// a study: a cluster to bring up, a workload to deploy, meshes to install and
// verify, load to generate and resources to sample. The lab and Kubernetes
// implement it in their own packages.
package platform
