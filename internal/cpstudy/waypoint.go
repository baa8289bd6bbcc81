package cpstudy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A waypoint per namespace, as `istioctl waypoint apply -n NS` makes one:
// a Gateway of class istio-waypoint, which the namespace's label binds
// its services to, and the pod and Service Istio's deployment controller
// would create for it. The study creates those itself (istiod's
// deployment controller is off, as nothing here runs a Deployment) and
// writes the Gateway's status address, which Istio sets once a waypoint
// pod is ready.
const (
	waypointName     = "waypoint"
	waypointClass    = "istio-waypoint"
	waypointPort     = 15008
	useWaypointLabel = "istio.io/use-waypoint"
	gatewayNameLabel = "gateway.networking.k8s.io/gateway-name"
	managedLabel     = "gateway.istio.io/managed"
	managedByIstio   = "istio.io-mesh-controller"
)

var gvrGateway = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

func waypointLabels() map[string]string {
	return map[string]string{gatewayNameLabel: waypointName, managedLabel: managedByIstio}
}

func waypointGateway(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": waypointName, "namespace": ns,
			"labels": map[string]any{"istio.io/waypoint-for": "service"}},
		"spec": map[string]any{"gatewayClassName": waypointClass,
			"listeners": []any{map[string]any{"name": "mesh", "port": int64(waypointPort), "protocol": "HBONE"}}},
	}}
}

// addWaypoints creates each namespace's waypoint and returns its pod's
// address by namespace, once kwok has given it one.
func (k kube) addWaypoints(ctx context.Context, l *layout) (map[string]string, error) {
	for i, ns := range l.Namespaces {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: waypointName, Namespace: ns, Labels: waypointLabels()},
			Spec: corev1.ServiceSpec{Selector: map[string]string{gatewayNameLabel: waypointName},
				Ports: []corev1.ServicePort{{Name: "mesh", Port: waypointPort, TargetPort: intstr.FromInt32(waypointPort)}}},
		}
		if _, err := k.cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create waypoint Service in %s: %w", ns, err)
		}
		labels := waypointLabels()
		labels[ambientLabel] = "none" // a waypoint is not itself captured
		p := podObject(pod{Name: waypointName + "-0", Namespace: ns, Node: l.Nodes[i%len(l.Nodes)]}, labels)
		delete(p.Labels, "app")
		if _, err := k.cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create waypoint pod in %s: %w", ns, err)
		}
		gw := k.dyn.Resource(gvrGateway).Namespace(ns)
		cur, err := gw.Create(ctx, waypointGateway(ns), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, err = gw.Get(ctx, waypointName, metav1.GetOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("create waypoint Gateway in %s: %w", ns, err)
		}
		addr := []any{map[string]any{"type": "Hostname", "value": fqdn(waypointName, ns)}}
		if err := unstructured.SetNestedSlice(cur.Object, addr, "status", "addresses"); err != nil {
			return nil, err
		}
		if _, err := gw.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("waypoint Gateway status in %s: %w", ns, err)
		}
	}
	ips := map[string]string{}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(wctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, ns := range l.Namespaces {
			if p, err := k.cs.CoreV1().Pods(ns).Get(ctx, waypointName+"-0", metav1.GetOptions{}); err == nil && p.Status.PodIP != "" {
				ips[ns] = p.Status.PodIP
			}
		}
		return len(ips) == len(l.Namespaces), nil
	})
	if err != nil {
		return nil, fmt.Errorf("%d of %d waypoint pods have an address: %w", len(ips), len(l.Namespaces), err)
	}
	return ips, nil
}

// removeWaypoints deletes what addWaypoints created.
func (k kube) removeWaypoints(ctx context.Context, l *layout) error {
	for _, ns := range l.Namespaces {
		if err := k.dyn.Resource(gvrGateway).Namespace(ns).Delete(ctx, waypointName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete waypoint Gateway in %s: %w", ns, err)
		}
		if err := k.cs.CoreV1().Pods(ns).Delete(ctx, waypointName+"-0", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete waypoint pod in %s: %w", ns, err)
		}
		if err := k.cs.CoreV1().Services(ns).Delete(ctx, waypointName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete waypoint Service in %s: %w", ns, err)
		}
	}
	return nil
}
