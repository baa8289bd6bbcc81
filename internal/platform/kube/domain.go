package kube

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultClusterDomain is Kubernetes' default DNS domain, used when the
// cluster does not say its own.
const defaultClusterDomain = "cluster.local"

// domain is the cluster's DNS domain, as Up read it.
func (p *kubePlatform) domain() string {
	if p.clusterDomain == "" {
		return defaultClusterDomain
	}
	return p.clusterDomain
}

// readClusterDomain reads the cluster's DNS domain from CoreDNS's
// configuration (kube-system/coredns, as kubeadm, EKS, AKS and kind
// name it), where its kubernetes plugin serves it; a cluster whose DNS
// is configured elsewhere (GKE's kube-dns) keeps the default.
func (p *kubePlatform) readClusterDomain(ctx context.Context) (string, error) {
	cm, err := p.c.kube.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return defaultClusterDomain, nil
	}
	if err != nil {
		return "", err
	}
	if d := corefileDomain(cm.Data["Corefile"]); d != "" {
		return d, nil
	}
	return defaultClusterDomain, nil
}

// corefileDomain is the first zone of a Corefile's kubernetes plugin:
// "kubernetes cluster.local in-addr.arpa ip6.arpa {" gives cluster.local.
func corefileDomain(corefile string) string {
	for _, line := range strings.Split(corefile, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "kubernetes" && f[1] != "{" {
			return strings.TrimSuffix(f[1], ".")
		}
	}
	return ""
}
