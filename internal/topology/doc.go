// Package topology describes service graphs as data: services, their
// replicas and resources, and the downstream calls each makes. It holds the
// built-in graphs (tiered, bookinfo, boutique, chain) and stamps out namespaces.
package topology
