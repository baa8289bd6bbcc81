// Package infra is the vocabulary of where a study runs, shared by the
// runner, the platforms and the read side that stores it: the platforms'
// names, the cluster's nodes and roles, the host facts and CPU figures
// recorded with each result, and the load a platform is asked to generate.
package infra
