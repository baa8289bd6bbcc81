package kube

import (
	"context"
	"errors"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

var gatewayGVK = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}

// requireGatewayAPI fails with the fix when the cluster lacks the Gateway
// API CRDs that waypoints are made of. meshbench does not install them: they
// are cluster infrastructure other tools share.
func (p *kubePlatform) requireGatewayAPI(ctx context.Context) error {
	_, err := p.c.resourceFor(gatewayGVK, "")
	if meta.IsNoMatchError(err) {
		return errors.New("waypoints need the Gateway API CRDs (gateway.networking.k8s.io/v1), which the cluster lacks: " +
			"install them with kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.2.1/standard-install.yaml")
	}
	if err != nil {
		return fmt.Errorf("gateway API: %w", err)
	}
	return nil
}

// waitWaypoints waits for every namespace's waypoint to be programmed,
// scales its Deployment to the study's replicas, and waits for them.
func (p *kubePlatform) waitWaypoints(ctx context.Context, replicas int) error {
	for _, ns := range p.namespaces {
		ri, err := p.c.resourceFor(gatewayGVK, ns)
		if err != nil {
			return err
		}
		err = wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
			g, err := ri.Get(ctx, waypointName, metav1.GetOptions{})
			if err != nil {
				return false, pollErr(ctx, err)
			}
			return conditionTrue(g.Object, "Programmed"), nil
		})
		if err != nil {
			return fmt.Errorf("waypoint %s/%s not programmed after %s: %w (is istiod running?)", ns, waypointName, p.opts.Timeout, err)
		}
		scale := &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: waypointName, Namespace: ns},
			Spec:       autoscalingv1.ScaleSpec{Replicas: int32(replicas)},
		}
		if _, err := p.c.kube.AppsV1().Deployments(ns).UpdateScale(ctx, waypointName, scale, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("scale waypoint %s: %w", ns, err)
		}
	}
	return p.waitRollouts(ctx, p.namespaces, labelGatewayName+"="+waypointName)
}

// conditionTrue reports whether an object's status has the condition
// with status "True".
func conditionTrue(obj map[string]any, condType string) bool {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == condType {
			return cm["status"] == "True"
		}
	}
	return false
}
