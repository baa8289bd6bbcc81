// Package leftover records, under the lab's state root, what a running
// control-plane study holds on the host (its cgroups and the local
// control plane's working directory, with etcd's data and the API
// server's keys), so that `meshbench lab down` can find and remove what a
// study killed outright left behind. It needs no Kubernetes client, so a
// lab-only meshbench removes them too.
package leftover
