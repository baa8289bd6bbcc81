package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// clients are the API clients of one cluster. They also serve Helm as its
// RESTClientGetter, so that Helm talks to the same cluster and context
// without a discovery cache on disk.
type clients struct {
	raw    clientcmd.ClientConfig
	config *rest.Config
	kube   kubernetes.Interface
	dyn    dynamic.Interface
	disc   discovery.CachedDiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newClients(kubeconfig, context string) (*clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	raw := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := raw.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w (set --kubeconfig and --context)", err)
	}
	// Installing charts creates hundreds of objects; the client default of
	// 5 requests per second would make that take minutes.
	cfg.QPS, cfg.Burst = 50, 100
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disc := memory.NewMemCacheClient(kc.Discovery())
	return &clients{
		raw: raw, config: cfg, kube: kc, dyn: dyn, disc: disc,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc),
	}, nil
}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (c *clients) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(c.config), nil }

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (c *clients) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return c.disc, nil
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (c *clients) ToRESTMapper() (meta.RESTMapper, error) { return c.mapper, nil }

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter.
func (c *clients) ToRawKubeConfigLoader() clientcmd.ClientConfig { return c.raw }

// resetDiscovery forgets cached API groups, after CRDs came or went.
func (c *clients) resetDiscovery() { c.mapper.Reset() }
