package kube

// Labels meshbench puts on what it makes. Everything carries managedBy, so
// that clean-up finds exactly meshbench's objects, and nothing else, with
// one selector.
const (
	labelManagedBy = "app.kubernetes.io/managed-by"
	managedBy      = "meshbench"
	// selectorManaged selects every object meshbench made.
	selectorManaged = labelManagedBy + "=" + managedBy

	// labelComponent says what a meshbench object is for.
	labelComponent = "meshbench.io/component"
	// labelApp and labelVersion follow Istio's conventions, so that
	// telemetry and policies read them unchanged.
	labelApp     = "app"
	labelVersion = "version"

	componentApp      = "app"
	componentLoad     = "load"
	componentProbe    = "probe"
	componentWorkload = "workload" // the workload's namespaces
	componentMesh     = "mesh"     // mesh objects meshbench applies itself
	componentIngress  = "ingress"  // the plain ingress gateway

	// fieldManager names meshbench in server-side apply.
	fieldManager = "meshbench"
)

// managedLabels returns the labels every object meshbench makes carries,
// plus extra.
func managedLabels(extra map[string]string) map[string]string {
	l := map[string]string{labelManagedBy: managedBy}
	for k, v := range extra {
		l[k] = v
	}
	return l
}
