package kube

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/platform"
)

// Options configure the Kubernetes platform. A study file's platform
// section maps onto them.
type Options struct {
	// Kubeconfig is the kubeconfig file; empty uses $KUBECONFIG or
	// ~/.kube/config, as kubectl does.
	Kubeconfig string
	// Context is the kubeconfig context; empty uses the current one.
	Context string
	// Image is meshbench's own image, "registry/repository:tag", which
	// every app, load and probe pod runs.
	Image string
	// RunID names this run on every object it makes, so that clean-up
	// removes exactly what it made; empty is a fresh one (NewRunID).
	RunID string
	// NamespacePrefix names the workload's namespaces, PREFIX1 ...
	// PREFIXn; empty is "ns-", as on every platform.
	NamespacePrefix string
	// ImagePullPolicy is the pods' pull policy; empty is IfNotPresent.
	ImagePullPolicy string
	// GatewayImage is the plain ingress gateway's Envoy image (baseline,
	// Linkerd, Cilium); empty is defaultGatewayImage.
	GatewayImage string
	// Ingress installs an ingress gateway with every mesh, and an
	// unmeshed namespace for the outside generators: set it when a cell
	// loads through infra.PathIngress.
	Ingress bool
	// Meshes are the meshes the study will install. Up refuses, before
	// anything is created, one its cluster cannot host (cilium on a
	// cluster that does not run Cilium so configured). A mesh naming
	// another Context runs on that cluster (same kubeconfig), with the
	// same workload, nodes and options.
	Meshes []mesh.MeshSpec
	// Charts override the pinned chart of a component, by key (see
	// DefaultCharts): another version, repository, local path or values.
	Charts map[string]mesh.ChartSource
	// Prometheus is the URL of a Prometheus server scraping cAdvisor; empty
	// samples the metrics API (metrics.k8s.io) instead.
	Prometheus string
	// SampleInterval is the metrics API's sampling period and
	// Prometheus's scrape interval; a span of twice this without a
	// reading is recorded as a gap. Default 15s (the metrics server's
	// resolution).
	SampleInterval time.Duration
	// Timeout bounds each wait for readiness; default 5 minutes.
	Timeout time.Duration
	// HelmRepositoryConfig and HelmRepositoryCache locate the user's Helm
	// repositories (for charts named "repo/chart"); empty uses Helm's
	// defaults and $HELM_* variables.
	HelmRepositoryConfig string
	HelmRepositoryCache  string
	// AllowChartRules accepts the wide rules (wideRule) of the charts'
	// roles they name, "ClusterRole/NAME" or "Role/NAMESPACE/NAME", which
	// the role a run needs would otherwise refuse.
	AllowChartRules []string
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// Defaults.
const (
	defaultTimeout        = 5 * time.Minute
	defaultSampleInterval = infra.KubernetesSampleInterval
)

// Compile-time check that the platform implements the interface.
var _ platform.Platform = (*kubePlatform)(nil)

// New returns the Kubernetes platform. It checks the options and loads the
// kubeconfig, but does not contact the cluster until Info or Up. When a
// mesh names a context of its own, the platform spans those clusters.
func New(opts Options) (platform.Platform, error) {
	if opts.RunID == "" {
		opts.RunID = NewRunID() // one id for every cluster of the run
	}
	byContext := map[string][]mesh.MeshSpec{}
	var contexts []string // the study's own first, whose facts a result records
	for _, m := range opts.Meshes {
		if meshContext(opts, m) == opts.Context && len(contexts) == 0 {
			contexts = append(contexts, opts.Context)
			byContext[opts.Context] = nil
		}
	}
	for _, m := range opts.Meshes {
		c := meshContext(opts, m)
		if _, ok := byContext[c]; !ok {
			contexts = append(contexts, c)
		}
		byContext[c] = append(byContext[c], m)
	}
	if len(contexts) <= 1 {
		if len(contexts) == 1 {
			opts.Context = contexts[0]
		}
		return newPlatform(opts)
	}
	clusters := map[string]platform.Platform{}
	for _, c := range contexts {
		o := opts
		o.Context, o.Meshes = c, byContext[c]
		p, err := newPlatform(o)
		if err != nil {
			return nil, fmt.Errorf("context %q: %w", c, err)
		}
		clusters[c] = p
	}
	return newClusters(contexts, clusters, func(m mesh.MeshSpec) string { return meshContext(opts, m) }), nil
}

// meshContext is the kubeconfig context of the cluster a mesh runs on.
func meshContext(opts Options, m mesh.MeshSpec) string {
	if m.Context != "" {
		return m.Context
	}
	return opts.Context
}

func newPlatform(opts Options) (*kubePlatform, error) {
	if opts.Image == "" {
		return nil, errors.New("kubernetes platform: image is required: the registry and tag of meshbench's image, such as ghcr.io/you/meshbench:v0.1.0")
	}
	if opts.RunID == "" {
		opts.RunID = NewRunID()
	}
	if err := checkRunID(opts.RunID); err != nil {
		return nil, fmt.Errorf("kubernetes platform: %w", err)
	}
	if opts.NamespacePrefix != "" && !namespacePrefixPattern.MatchString(opts.NamespacePrefix) {
		return nil, fmt.Errorf("kubernetes platform: namespace_prefix %q: want lower-case letters, digits and '-', starting with a letter, at most 50", opts.NamespacePrefix)
	}
	switch opts.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return nil, fmt.Errorf("kubernetes platform: image_pull_policy %q: want Always, IfNotPresent or Never", opts.ImagePullPolicy)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.SampleInterval <= 0 {
		opts.SampleInterval = defaultSampleInterval
	}
	if opts.GatewayImage == "" {
		opts.GatewayImage = defaultGatewayImage
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	charts, err := resolveCharts(opts.Charts)
	if err != nil {
		return nil, fmt.Errorf("kubernetes platform: %w", err)
	}
	c, err := newClients(opts.Kubeconfig, opts.Context)
	if err != nil {
		return nil, fmt.Errorf("kubernetes platform: %w", err)
	}
	return &kubePlatform{opts: opts, log: opts.Logger, c: c, charts: charts}, nil
}
