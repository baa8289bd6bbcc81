package dataplane

// TrustDomain is the mesh's SPIFFE trust domain, Istio's default.
const TrustDomain = "cluster.local"

// SPIFFEID is the identity Istio gives a workload: its namespace and
// service account.
func SPIFFEID(namespace, serviceAccount string) string {
	return "spiffe://" + TrustDomain + "/ns/" + namespace + "/sa/" + serviceAccount
}

// trustDomainPrefix matches every identity of the mesh.
const trustDomainPrefix = "spiffe://" + TrustDomain + "/"

// Identity is a pod's SPIFFE ID.
func (p Pod) Identity() string { return SPIFFEID(p.Namespace, p.ServiceAccount) }
