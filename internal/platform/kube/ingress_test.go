package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/meshbench/meshbench/internal/testenv"
)

// TestPlainIngressConfig checks the plain gateway's routes: each
// namespace's prefix goes, stripped, to that namespace's entry Service.
func TestPlainIngressConfig(t *testing.T) {
	t.Parallel()
	var cfg struct {
		StaticResources struct {
			Listeners []struct {
				FilterChains []struct {
					Filters []struct {
						TypedConfig struct {
							RouteConfig struct {
								VirtualHosts []struct {
									Routes []struct {
										Match map[string]string `json:"match"`
										Route map[string]any    `json:"route"`
									} `json:"routes"`
								} `json:"virtual_hosts"`
							} `json:"route_config"`
						} `json:"typed_config"`
					} `json:"filters"`
				} `json:"filter_chains"`
			} `json:"listeners"`
			Clusters []struct {
				Name           string `json:"name"`
				LoadAssignment struct {
					Endpoints []struct {
						LbEndpoints []struct {
							Endpoint struct {
								Address struct {
									SocketAddress struct {
										Address   string `json:"address"`
										PortValue int    `json:"port_value"`
									} `json:"socket_address"`
								} `json:"address"`
							} `json:"endpoint"`
						} `json:"lb_endpoints"`
					} `json:"endpoints"`
				} `json:"load_assignment"`
			} `json:"clusters"`
		} `json:"static_resources"`
	}
	if err := yaml.Unmarshal([]byte(plainIngressConfig([]string{"ns-1", "ns-2"}, "productpage", 9080, defaultClusterDomain)), &cfg); err != nil {
		t.Fatal(err)
	}
	routes := cfg.StaticResources.Listeners[0].FilterChains[0].Filters[0].TypedConfig.RouteConfig.VirtualHosts[0].Routes
	if len(routes) != 2 {
		t.Fatalf("%d routes, want 2", len(routes))
	}
	for i, ns := range []string{"ns-1", "ns-2"} {
		if routes[i].Match["prefix"] != "/"+ns+"/" || routes[i].Route["cluster"] != ns || routes[i].Route["prefix_rewrite"] != "/" {
			t.Errorf("route %d = %+v, want /%s/ stripped to cluster %s", i, routes[i], ns, ns)
		}
		c := cfg.StaticResources.Clusters[i]
		sa := c.LoadAssignment.Endpoints[0].LbEndpoints[0].Endpoint.Address.SocketAddress
		if c.Name != ns || sa.Address != "productpage."+ns+".svc.cluster.local" || sa.PortValue != 9080 {
			t.Errorf("cluster %d = %s -> %s:%d", i, c.Name, sa.Address, sa.PortValue)
		}
	}
}

// TestIntegrationPlainIngressConfigValid has Envoy itself validate the
// plain gateway's configuration.
func TestIntegrationPlainIngressConfigValid(t *testing.T) {
	testenv.Integration(t)
	envoy := os.Getenv("MESHBENCH_ENVOY")
	testenv.Need(t, envoy != "", "Envoy: set MESHBENCH_ENVOY to an envoy binary (scripts/setup.sh installs one in .venv)")
	path := filepath.Join(t.TempDir(), "envoy.yaml")
	if err := os.WriteFile(path, []byte(plainIngressConfig([]string{"ns-1", "ns-2"}, "productpage", 9080, defaultClusterDomain)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(envoy, "--mode", "validate", "-c", path, "--disable-hot-restart").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK") {
		t.Fatalf("envoy --mode validate: %v\n%s", err, out)
	}
}
