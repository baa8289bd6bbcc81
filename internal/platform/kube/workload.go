package kube

import (
	"fmt"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/topology"
)

const (
	// graphConfigMap holds the graph every app pod reads, so that a graph
	// from a file runs exactly as written, not only the built-ins.
	graphConfigMap = "meshbench-graph"
	graphKey       = "graph.yaml"
	graphMount     = "/etc/meshbench"
	// appContainer is the app's container name in every app pod, which
	// tells the app apart from an injected proxy.
	appContainer = "app"
	// loadServiceAccount is the load generators' identity, which the
	// policy profiles allow to call the entry service.
	loadServiceAccount = "meshbench-load"
)

// manifestParams are the inputs of the workload's manifests beyond the
// workload itself.
type manifestParams struct {
	// Prefix names the workload's namespaces: Prefix1 ... PrefixN.
	Prefix     string
	Image      string
	PullPolicy corev1.PullPolicy
	Place      placement
}

// workloadManifests returns every object of the workload, namespace by
// namespace, in the order to apply them: Namespace, ConfigMap,
// ServiceAccounts, Services, Deployments.
func workloadManifests(w platform.Workload, mp manifestParams) ([]*unstructured.Unstructured, error) {
	if w.Graph == nil {
		return nil, fmt.Errorf("workload has no graph")
	}
	if w.Namespaces < 1 {
		return nil, fmt.Errorf("workload namespaces: %d: want at least 1", w.Namespaces)
	}
	graph, err := w.Graph.Marshal()
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, ns := range workloadNamespaces(mp.Prefix, w.Namespaces) {
		objs = append(objs,
			&corev1.Namespace{ObjectMeta: objMeta("", ns, map[string]string{labelComponent: componentWorkload})},
			&corev1.ConfigMap{ObjectMeta: objMeta(ns, graphConfigMap, nil), Data: map[string]string{graphKey: string(graph)}},
		)
		for _, sa := range serviceAccounts(w.Graph) {
			objs = append(objs, &corev1.ServiceAccount{ObjectMeta: objMeta(ns, sa, nil)})
		}
		for _, s := range w.Graph.Services {
			objs = append(objs, service(ns, s, appProtocol(w.Graph, s.Name)))
		}
		for _, d := range w.Graph.Deployments() {
			d.Replicas = w.ReplicasOf(d)
			dep, err := deployment(ns, d, mp)
			if err != nil {
				return nil, err
			}
			objs = append(objs, dep)
		}
	}
	return toUnstructured(objs)
}

// workloadNamespaces names the workload's n namespaces; an empty prefix
// names them as every platform does (ns-1 ... ns-N).
func workloadNamespaces(prefix string, n int) []string {
	out := topology.Namespaces(n)
	if prefix != "" {
		for i := range out {
			out[i] = prefix + strconv.Itoa(i+1)
		}
	}
	return out
}

// serviceAccounts lists the graph's identities, the load generators' and
// the policy probe's.
func serviceAccounts(g *topology.Graph) []string {
	seen := map[string]bool{loadServiceAccount: true, probeServiceAccount: true}
	for _, s := range g.Services {
		seen[s.ServiceAccount] = true
	}
	out := make([]string, 0, len(seen))
	for sa := range seen {
		out = append(out, sa)
	}
	sort.Strings(out)
	return out
}

// appProtocol is the Service port's appProtocol, which tells Istio how to
// carry its traffic: "grpc" (HTTP/2) when every caller calls it over gRPC,
// "http" when every one uses HTTP/1.1, and none when they mix protocols, so
// that Istio detects each connection's and keeps it upstream.
func appProtocol(g *topology.Graph, service string) *string {
	seen := map[topology.Protocol]bool{}
	if service == g.Entry {
		seen[g.EntryProtocol.Or()] = true
	}
	for _, s := range g.Services {
		for _, e := range g.Edges(s.Name) {
			if e.Service == service {
				seen[e.Protocol] = true
			}
		}
	}
	switch {
	case len(seen) > 1:
		return nil
	case seen[topology.ProtocolGRPC]:
		return ptr("grpc")
	case seen[topology.ProtocolH2C]:
		return ptr("http2")
	}
	return ptr("http")
}

// portName names the Service port after its protocol, as Istio's naming
// convention reads it; "app", which names no protocol, where callers mix.
func portName(proto *string) string {
	if proto == nil {
		return "app"
	}
	return *proto
}

func service(ns string, s topology.Service, proto *string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objMeta(ns, s.Name, map[string]string{labelApp: s.Name}),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{labelApp: s.Name},
			Ports: []corev1.ServicePort{{
				Name: portName(proto), Port: int32(s.Port), TargetPort: intstr.FromInt32(int32(s.Port)),
				Protocol: corev1.ProtocolTCP, AppProtocol: proto,
			}},
		},
	}
}

func deployment(ns string, d topology.Deployment, mp manifestParams) (*appsv1.Deployment, error) {
	res, err := requirements(d.Resources)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", d.Service, err)
	}
	// No --upstream: the app calls each downstream by its short name at
	// its port, which resolves inside the pod's own namespace.
	args := []string{"app", "--graph", graphMount + "/" + graphKey, "--service", d.Service, "--version", d.Version,
		"--namespace", ns, "--listen", ":" + strconv.Itoa(d.Port)}
	podLabels := map[string]string{labelApp: d.Service, labelVersion: d.Version, labelComponent: componentApp}
	return &appsv1.Deployment{
		ObjectMeta: objMeta(ns, d.Name, podLabels),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(d.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: d.Service, labelVersion: d.Version}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: managedLabels(podLabels)},
				Spec: corev1.PodSpec{
					SecurityContext:    podSecurity(nonRootUID),
					ServiceAccountName: d.ServiceAccount,
					NodeSelector:       mp.Place.NodeSelector,
					Tolerations:        mp.Place.Tolerations,
					Containers: []corev1.Container{{
						Name: appContainer, Image: mp.Image, ImagePullPolicy: mp.PullPolicy, Args: args, SecurityContext: containerSecurity(),
						Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: int32(d.Port), Protocol: corev1.ProtocolTCP}},
						Resources:      res,
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 2},
						VolumeMounts:   []corev1.VolumeMount{{Name: "graph", MountPath: graphMount, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "graph", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: graphConfigMap}},
					}}},
				},
			},
		},
	}, nil
}

// requirements turns the graph's resource strings into Kubernetes
// requirements; empty strings set nothing, as in the bookinfo study.
func requirements(r topology.Resources) (corev1.ResourceRequirements, error) {
	var out corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q string) error {
		if q == "" {
			return nil
		}
		v, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("%s %q: %w", name, q, err)
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = v
		return nil
	}
	for _, s := range []struct {
		list *corev1.ResourceList
		name corev1.ResourceName
		q    string
	}{
		{&out.Requests, corev1.ResourceCPU, r.CPURequest},
		{&out.Requests, corev1.ResourceMemory, r.MemoryRequest},
		{&out.Limits, corev1.ResourceCPU, r.CPULimit},
		{&out.Limits, corev1.ResourceMemory, r.MemoryLimit},
	} {
		if err := set(s.list, s.name, s.q); err != nil {
			return out, err
		}
	}
	return out, nil
}

// objMeta is the metadata of an object meshbench makes.
func objMeta(ns, name string, extra map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: managedLabels(extra)}
}
