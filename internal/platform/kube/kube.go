package kube

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// kubePlatform is a study's view of one cluster: the node roles Up found,
// the workload Deploy made and the mesh InstallMesh installed.
type kubePlatform struct {
	opts   Options
	log    *slog.Logger
	c      *clients
	charts map[string]mesh.ChartSource

	places map[infra.NodeRole]placement
	nodes  map[infra.NodeRole][]string // node names by role, from Up

	workload   *platform.Workload
	namespaces []string // the workload's namespaces
	mesh       *installedMesh
	lease      *lease // this run's hold on the cluster, from Up to Down
	// clusterDomain is the cluster's DNS domain, which Up reads.
	clusterDomain string
	// scopedUser says whether the user holds the namespaced role (scoped),
	// once asked.
	scopedUser *bool
}

// Info reports the cluster's version and the app nodes' kernel and CPUs.
func (p *kubePlatform) Info(ctx context.Context) (infra.Info, error) {
	v, err := p.c.kube.Discovery().ServerVersion()
	if err != nil {
		return infra.Info{}, fmt.Errorf("kubernetes: server version: %w (check --kubeconfig and --context)", err)
	}
	info := infra.Info{Name: "kubernetes", Host: p.c.config.Host, Context: contextName(p), Versions: map[string]string{"kubernetes": v.GitVersion}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "helm.sh/helm/v3" {
				info.Versions["helm-sdk"] = d.Version
			}
		}
	}
	for key, c := range p.charts {
		if c.Version != "" {
			info.Versions["chart/"+key] = c.Version
		}
	}
	if p.mesh != nil {
		// What was installed, which for a local chart is the only record.
		for release, v := range p.mesh.Versions {
			info.Versions["release/"+release] = v
		}
	}
	if n, err := p.appNode(ctx); err != nil {
		return infra.Info{}, fmt.Errorf("kubernetes: app node: %w", err)
	} else if n != nil {
		info.Kernel = n.Status.NodeInfo.KernelVersion
		cpu := n.Status.Capacity[corev1.ResourceCPU]
		info.CPUs = int(cpu.Value())
		info.Versions["kubelet"] = n.Status.NodeInfo.KubeletVersion
		info.Versions["container-runtime"] = n.Status.NodeInfo.ContainerRuntimeVersion
	}
	return info, nil
}

// appNode is the node whose facts a result records: the first app node Up
// matched or, before Up, the first node labelled for the app role; nil
// when there is none.
func (p *kubePlatform) appNode(ctx context.Context) (*corev1.Node, error) {
	if names := p.nodes[infra.NodeApp]; len(names) > 0 {
		return p.c.kube.CoreV1().Nodes().Get(ctx, names[0], metav1.GetOptions{})
	}
	list, err := p.c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: labelRole + "=" + string(infra.NodeApp), Limit: 1})
	if err != nil || len(list.Items) == 0 {
		return nil, err
	}
	return &list.Items[0], nil
}
