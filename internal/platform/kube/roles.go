package kube

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/resources"
)

// classify says what role a pod's container plays, the same grouping the
// lab reports. ok is false for containers meshbench does not measure.
func classify(pod *corev1.Pod, container string) (role metrics.Role, ok bool) {
	l := pod.Labels
	switch {
	case l[labelComponent] == componentLoad:
		if mesh.IsSidecarContainer(container) {
			return metrics.RoleSidecar, true
		}
		return metrics.RoleLoad, true
	case l[labelComponent] == componentApp:
		if container == appContainer {
			return metrics.RoleApp, true
		}
		return metrics.RoleSidecar, true // istio-proxy, linkerd-proxy
	case l[labelGatewayName] == waypointName || l["gateway.istio.io/managed"] == "istio.io-mesh-controller":
		return metrics.RoleWaypoint, true
	case l["app"] == "ztunnel":
		return metrics.RoleNodeProxy, true
	case l["k8s-app"] == "istio-cni-node":
		return metrics.RoleCNI, true
	case l["k8s-app"] == "cilium" || l["k8s-app"] == "cilium-envoy" || l["app"] == "spire-agent":
		// Cilium's data plane: the agent encrypts, enforces policy and
		// runs the mutual authentication handshake; SPIRE's agent issues
		// the identities it uses, on every node.
		return metrics.RoleNodeProxy, true
	case l["istio"] == "ingressgateway" || l["app"] == ingressGatewayName || l[labelComponent] == componentIngress:
		return metrics.RoleIngress, true
	case l["app"] == "istiod" || l["linkerd.io/control-plane-component"] != "" ||
		l["io.cilium/app"] == "operator" || l["app"] == "spire-server":
		return metrics.RoleControlPlane, true
	}
	return "", false
}

// components lists the measured containers of pods, with their requests
// and limits, for the series of a measurement.
func components(pods []corev1.Pod) map[string]metrics.Component {
	out := map[string]metrics.Component{}
	for i := range pods {
		pod := &pods[i]
		for _, c := range runningContainers(pod) {
			role, ok := classify(pod, c.Name)
			if !ok {
				continue
			}
			comp := metrics.Component{
				Role: role, Node: pod.Spec.NodeName, Namespace: pod.Namespace, Pod: pod.Name, Container: c.Name,
				Requirements: resources.Requirements{
					CPURequestMilli: c.Resources.Requests.Cpu().MilliValue(),
					CPULimitMilli:   c.Resources.Limits.Cpu().MilliValue(),
					MemRequestBytes: c.Resources.Requests.Memory().Value(),
					MemLimitBytes:   c.Resources.Limits.Memory().Value(),
				},
			}
			out[componentKey(pod.Namespace, pod.Name, c.Name)] = comp
		}
	}
	return out
}

func componentKey(ns, pod, container string) string { return ns + "/" + pod + "/" + container }

// runningContainers are a pod's containers that run alongside the app:
// its containers and its native sidecars (init containers that restart
// always), but not one-shot init containers.
func runningContainers(pod *corev1.Pod) []corev1.Container {
	var out []corev1.Container
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return append(out, pod.Spec.Containers...)
}
