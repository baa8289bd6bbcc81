package cpstudy

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// The workload at one scale point is spread like the tiered graph at
// scale: services of podsPerService pods each, dealt round-robin over
// namespaces that form tiers, each tier calling the next; at most
// podsPerNode pods on a node.
const (
	podsPerService   = 4
	podsPerNamespace = 250
	podsPerNode      = 100
	servicePort      = 8080
	ambientLabel     = "istio.io/dataplane-mode"
)

var (
	gvrSidecar = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "sidecars"}
	gvrAuthz   = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "authorizationpolicies"}
)

type service struct {
	Name, Namespace string
	Tier            int
}

type pod struct {
	Name, Namespace, Service, Node, IP string
	Tier                               int
}

// layout is the workload at one scale point.
type layout struct {
	Pods       int
	Namespaces []string // by tier
	Services   []service
	PodList    []pod
	Nodes      []string
	// WaypointIPs are the waypoint pods' addresses by namespace, while
	// the namespaces have waypoints.
	WaypointIPs map[string]string
}

func newLayout(pods int) layout {
	l := layout{Pods: pods}
	n := max(2, pods/podsPerNamespace)
	for i := range n {
		l.Namespaces = append(l.Namespaces, fmt.Sprintf("mb%d-t%d", pods, i))
	}
	nodes := (pods + podsPerNode - 1) / podsPerNode
	for i := range nodes {
		l.Nodes = append(l.Nodes, fmt.Sprintf("mb-node-%d", i))
	}
	for k := 0; len(l.PodList) < pods; k++ {
		s := service{Name: fmt.Sprintf("svc-%d", k), Namespace: l.Namespaces[k%n], Tier: k % n}
		l.Services = append(l.Services, s)
		for j := 0; j < podsPerService && len(l.PodList) < pods; j++ {
			l.PodList = append(l.PodList, pod{Name: fmt.Sprintf("%s-%d", s.Name, j), Namespace: s.Namespace, Service: s.Name,
				Tier: s.Tier, Node: l.Nodes[len(l.PodList)%nodes]})
		}
	}
	return l
}

// caller is the namespace of the tier that calls tier, the last tier's
// for the first.
func (l *layout) caller(tier int) string {
	return l.Namespaces[(tier+len(l.Namespaces)-1)%len(l.Namespaces)]
}

// fqdn is a service's host name.
func fqdn(name, ns string) string { return name + "." + ns + ".svc.cluster.local" }

// kube is what the study does to the API server.
type kube struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// parallel runs f for 0..n-1 on a few workers and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if i >= n || stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

func podObject(p pod, labels map[string]string) *corev1.Pod {
	l := map[string]string{"app": p.Service, "security.istio.io/tlsMode": "istio"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: l},
		Spec: corev1.PodSpec{
			NodeName:                      p.Node,
			AutomountServiceAccountToken:  new(bool),
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{Name: "app", Image: "meshbench/app",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: servicePort}}}},
		},
	}
}

func serviceObject(name, ns, selector string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": selector},
			Ports:    []corev1.ServicePort{{Name: "http", Port: servicePort, TargetPort: intstr.FromInt32(servicePort)}},
		},
	}
}

// authzPolicy is a namespace's L4 policy: its own tier and the tier that
// calls it may connect, plus extra principals (the study's changes).
func authzPolicy(ns, caller string, extra []string) *unstructured.Unstructured {
	principals := []any{}
	for _, p := range extra {
		principals = append(principals, p)
	}
	from := []any{map[string]any{"source": map[string]any{"namespaces": []any{ns, caller}}}}
	if len(principals) > 0 {
		from = append(from, map[string]any{"source": map[string]any{"principals": principals}})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "tier-allow", "namespace": ns},
		"spec":     map[string]any{"action": "ALLOW", "rules": []any{map[string]any{"from": from}}},
	}}
}

// sidecarScope limits a namespace's sidecars to their own namespace,
// istio-system and the tier they call.
func sidecarScope(ns, callee string) *unstructured.Unstructured {
	hosts := []any{"./*", "istio-system/*"}
	if callee != "" {
		hosts = append(hosts, callee+"/*")
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "Sidecar",
		"metadata": map[string]any{"name": "default", "namespace": ns},
		"spec":     map[string]any{"egress": []any{map[string]any{"hosts": hosts}}},
	}}
}

// create writes the layout's namespaces, policies, services and pods, and
// waits until every pod has an address and every service its endpoints.
func (k kube) create(ctx context.Context, l *layout) error {
	for i, ns := range l.Namespaces {
		if _, err := k.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		if _, err := k.dyn.Resource(gvrAuthz).Namespace(ns).Create(ctx, authzPolicy(ns, l.caller(i), nil), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create AuthorizationPolicy in %s: %w", ns, err)
		}
	}
	// Pods are admitted only once their namespace's default
	// ServiceAccount exists.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(wctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, ns := range l.Namespaces {
			if _, err := k.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("default service accounts: %w", err)
	}
	if err := parallel(len(l.Services), 16, func(i int) error {
		s := l.Services[i]
		_, err := k.cs.CoreV1().Services(s.Namespace).Create(ctx, serviceObject(s.Name, s.Namespace, s.Name), metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create services: %w", err)
	}
	if err := parallel(len(l.PodList), 32, func(i int) error {
		_, err := k.cs.CoreV1().Pods(l.PodList[i].Namespace).Create(ctx, podObject(l.PodList[i], nil), metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create pods: %w", err)
	}
	return k.waitAddresses(ctx, l)
}

// waitAddresses waits until kwok has given every pod an address and the
// endpoint-slice controller has published them all, and records the
// addresses in the layout.
func (k kube) waitAddresses(ctx context.Context, l *layout) error {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ips := map[string]string{}
	var ready int
	err := wait.PollUntilContextCancel(wctx, time.Second, true, func(ctx context.Context) (bool, error) {
		ready = 0
		for _, ns := range l.Namespaces {
			pods, err := k.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, p := range pods.Items {
				if p.Status.PodIP != "" {
					ips[ns+"/"+p.Name] = p.Status.PodIP
				}
			}
			slices, err := k.cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, s := range slices.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						ready += len(e.Addresses)
					}
				}
			}
		}
		return len(ips) >= len(l.PodList) && ready >= len(l.PodList), nil
	})
	if err != nil {
		return fmt.Errorf("%d of %d pods have an address and %d are ready endpoints: %w", len(ips), len(l.PodList), ready, err)
	}
	for i := range l.PodList {
		l.PodList[i].IP = ips[l.PodList[i].Namespace+"/"+l.PodList[i].Name]
	}
	return nil
}

// applyMode labels namespaces for ambient (and its waypoints) or not,
// creates or deletes the Sidecar scoping resources, and the waypoints.
func (k kube) applyMode(ctx context.Context, l *layout, m Mode) error {
	for i, ns := range l.Namespaces {
		dataplane, waypoint := "null", "null"
		if m.ambient() {
			dataplane = `"ambient"`
		}
		if m == AmbientWaypoint {
			waypoint = `"` + waypointName + `"`
		}
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s,%q:%s}}}`, ambientLabel, dataplane, useWaypointLabel, waypoint)
		if _, err := k.cs.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("label namespace %s: %w", ns, err)
		}
		sc := k.dyn.Resource(gvrSidecar).Namespace(ns)
		if m == SidecarScoped {
			callee := ""
			if i+1 < len(l.Namespaces) {
				callee = l.Namespaces[i+1]
			}
			if _, err := sc.Create(ctx, sidecarScope(ns, callee), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create Sidecar in %s: %w", ns, err)
			}
		} else if err := sc.Delete(ctx, "default", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Sidecar in %s: %w", ns, err)
		}
	}
	var err error
	switch {
	case m == AmbientWaypoint && l.WaypointIPs == nil:
		l.WaypointIPs, err = k.addWaypoints(ctx, l)
	case m != AmbientWaypoint && l.WaypointIPs != nil:
		if err = k.removeWaypoints(ctx, l); err == nil {
			l.WaypointIPs = nil
		}
	}
	return err
}

// remove deletes a layout's namespaces and waits until they are gone.
func (k kube) remove(ctx context.Context, l *layout) error {
	for _, ns := range l.Namespaces {
		if err := k.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return wait.PollUntilContextCancel(wctx, time.Second, true, func(ctx context.Context) (bool, error) {
		for _, ns := range l.Namespaces {
			if _, err := k.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
}
