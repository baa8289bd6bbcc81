package kube

import (
	"errors"
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
	if clientcmd.IsEmptyConfig(err) {
		return nil, errNoKubeconfig(kubeconfig)
	}
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

// errNoKubeconfig is meshbench's own message for a missing kubeconfig,
// in place of client-go's advice about KUBERNETES_MASTER, which a user of
// meshbench has no use for.
// The message carries its fix, so errNoKube's findings need no other.
func errNoKubeconfig(explicit string) error {
	if explicit != "" {
		return fmt.Errorf("%w: %s holds no cluster; point --kubeconfig at the kubeconfig of the cluster to run on", errNoKube, explicit)
	}
	return fmt.Errorf("%w: --kubeconfig is not set, $KUBECONFIG names no file and ~/.kube/config does not exist; "+
		"point --kubeconfig at the kubeconfig of the cluster to run on (kubectl config view --raw > FILE writes one)", errNoKube)
}

var errNoKube = errors.New("no kubeconfig")
