// Package cluster emulates a Kubernetes-like cluster on one Linux host with
// network namespaces, veth pairs, iptables and cgroups: nodes, pods,
// Services with virtual IPs, per-node daemons, resource limits and
// cAdvisor-style accounting, all under one name prefix so that nothing it
// did not create is ever touched.
package cluster
