package kube

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

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
	// ImagePullPolicy is the pods' pull policy; empty is IfNotPresent.
	ImagePullPolicy string
	// Charts override the pinned chart of a component, by key (see
	// DefaultCharts): another version, repository, local path or values.
	Charts map[string]platform.ChartSource
	// Prometheus is the URL of a Prometheus server scraping cAdvisor; empty
	// samples the metrics API (metrics.k8s.io) instead.
	Prometheus string
	// SampleInterval is the metrics API's sampling period and Prometheus's
	// query step; default 15s (the metrics server's resolution).
	SampleInterval time.Duration
	// Timeout bounds each wait for readiness; default 5 minutes.
	Timeout time.Duration
	// HelmRepositoryConfig and HelmRepositoryCache locate the user's Helm
	// repositories (for charts named "repo/chart"); empty uses Helm's
	// defaults and $HELM_* variables.
	HelmRepositoryConfig string
	HelmRepositoryCache  string
	// Logger receives progress; nil discards.
	Logger *slog.Logger
}

// Defaults.
const (
	defaultTimeout        = 5 * time.Minute
	defaultSampleInterval = 15 * time.Second
)

// Compile-time check that the platform implements the interface.
var _ platform.Platform = (*kubePlatform)(nil)

// New returns the Kubernetes platform. It checks the options and loads the
// kubeconfig, but does not contact the cluster until Info or Up.
func New(opts Options) (platform.Platform, error) {
	return newPlatform(opts)
}

func newPlatform(opts Options) (*kubePlatform, error) {
	if opts.Image == "" {
		return nil, errors.New("kubernetes platform: image is required: the registry and tag of meshbench's image, such as ghcr.io/you/meshbench:v0.1.0")
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
