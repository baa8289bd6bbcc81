package kube

import (
	"github.com/meshbench/meshbench/internal/mesh"
	corev1 "k8s.io/api/core/v1"
)

// Every pod meshbench makes runs as a hardened cluster demands, so that
// PodSecurity "restricted" admits it: not root, no privilege escalation,
// no capabilities, the runtime's default seccomp profile.
const (
	// nonRootUID is distroless's nonroot user, which meshbench's image
	// runs as; the plain gateway's Envoy runs as the image's envoy user.
	nonRootUID   = 65532
	envoyUID     = 101
	labelPSS     = "pod-security.kubernetes.io/enforce"
	pssRestrict  = "restricted"
	pssPrivilege = "privileged"
)

// podSecurity is the pod-level security context of a pod running as uid.
func podSecurity(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot: ptr(true), RunAsUser: ptr(uid), RunAsGroup: ptr(uid), FSGroup: ptr(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurity is every meshbench container's security context.
func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// podSecurityLevel is the least PodSecurity level a profile's meshed pods
// need. A sidecar mesh as meshbench installs it (no CNI plugin) adds an
// init container that redirects the pod's traffic with iptables, which
// needs NET_ADMIN and NET_RAW as root: only "privileged" admits it
// ("baseline" forbids those capabilities). Ambient, Cilium and no mesh
// leave the pods as meshbench made them: "restricted".
func podSecurityLevel(pr profile) string {
	if pr.Plane == mesh.PlaneSidecar {
		return pssPrivilege
	}
	return pssRestrict
}

// gatewaySecurity is the plain gateway's container security context:
// Envoy's image may write beside its binary, so its root stays writable.
func gatewaySecurity() *corev1.SecurityContext {
	sc := containerSecurity()
	sc.ReadOnlyRootFilesystem = nil
	return sc
}

// systemPodSecurity is the PodSecurity level of a namespace a mesh plan
// makes: the unmeshed generators' is "restricted"; the plain gateway's
// is its profile's (Linkerd meshes it); a mesh's own runs node agents
// and traffic redirection (ztunnel, istio-cni, proxy-init): "privileged".
func systemPodSecurity(pl meshPlan, ns string) string {
	switch ns {
	case outsideNamespace:
		return pssRestrict
	case plainIngressNamespace:
		return podSecurityLevel(pl.Profile)
	}
	return pssPrivilege
}
