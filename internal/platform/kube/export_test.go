package kube

// What the external test package (kube_test), which drives the whole CLI
// and so cannot live in package kube without an import cycle, needs of
// the shared test cluster.
var (
	NeedCluster     = needCluster
	EmptyPrometheus = emptyPrometheus
	Snapshot        = snapshot
	DiffSnapshots   = diffSnapshots
)
