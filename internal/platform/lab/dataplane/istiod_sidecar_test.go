package dataplane

import (
	"encoding/json"
	"testing"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/testenv"
)

func TestIstiodSidecarBootstrap(t *testing.T) {
	inv := fixture()
	p := buildIstiodSidecar(newView(inv), podNamed(&inv, "tier-2-app-a-0"), Settings{Workers: 2}, "/x/sidecar", "/x/istiod")
	b, err := json.Marshal(p.Boot)
	if err != nil {
		t.Fatal(err)
	}
	var boot struct {
		Node struct {
			ID       string         `json:"id"`
			Cluster  string         `json:"cluster"`
			Metadata map[string]any `json:"metadata"`
		} `json:"node"`
		Dynamic struct {
			ADS struct {
				APIType  string `json:"api_type"`
				Services []struct {
					EnvoyGRPC struct {
						ClusterName string `json:"cluster_name"`
					} `json:"envoy_grpc"`
				} `json:"grpc_services"`
			} `json:"ads_config"`
			LDS map[string]any `json:"lds_config"`
			CDS map[string]any `json:"cds_config"`
		} `json:"dynamic_resources"`
		Static struct {
			Listeners []any `json:"listeners"`
			Clusters  []struct {
				Name string `json:"name"`
				LA   struct {
					Endpoints []struct {
						LbEndpoints []struct {
							Endpoint struct {
								Address struct {
									Pipe struct{ Path string } `json:"pipe"`
								} `json:"address"`
							} `json:"endpoint"`
						} `json:"lb_endpoints"`
					} `json:"endpoints"`
				} `json:"load_assignment"`
			} `json:"clusters"`
		} `json:"static_resources"`
	}
	if err := json.Unmarshal(b, &boot); err != nil {
		t.Fatal(err)
	}
	if boot.Node.ID != "sidecar~10.244.1.11~tier-2-app-a-0.ns-1~ns-1.svc.cluster.local" || boot.Node.Cluster != "tier-2-app-a.ns-1" {
		t.Errorf("node %s cluster %s", boot.Node.ID, boot.Node.Cluster)
	}
	md := boot.Node.Metadata
	labels, _ := md["LABELS"].(map[string]any)
	if md["NAMESPACE"] != "ns-1" || md["SERVICE_ACCOUNT"] != "tier-2-app-a" || md["ISTIO_VERSION"] != istiod.ProxyVersion ||
		md["CLUSTER_ID"] != "Kubernetes" || labels["security.istio.io/tlsMode"] != "istio" || labels["app"] != "tier-2-app-a" {
		t.Errorf("metadata: %v", md)
	}
	if md["POD_PORTS"] != `[{"containerPort":8080,"protocol":"TCP"}]` {
		t.Errorf("pod ports: %v", md["POD_PORTS"])
	}
	if a := boot.Dynamic.ADS; a.APIType != "DELTA_GRPC" || len(a.Services) != 1 || a.Services[0].EnvoyGRPC.ClusterName != "xds-grpc" {
		t.Errorf("ads: %+v", a)
	}
	if _, ok := boot.Dynamic.LDS["ads"]; !ok {
		t.Errorf("lds not from ADS: %v", boot.Dynamic.LDS)
	}
	if len(boot.Static.Listeners) != 0 {
		t.Errorf("static listeners: %v", boot.Static.Listeners)
	}
	socks := map[string]string{}
	for _, c := range boot.Static.Clusters {
		socks[c.Name] = c.LA.Endpoints[0].LbEndpoints[0].Endpoint.Address.Pipe.Path
	}
	if len(socks) != 2 || socks["xds-grpc"] != "/x/istiod/xds.sock" || socks["sds-grpc"] != "/x/istiod/sds.sock" {
		t.Errorf("static clusters: %v", socks)
	}
}

func TestIntegrationEnvoyAcceptsIstiodSidecar(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	inv := fixture()
	p := buildIstiodSidecar(newView(inv), podNamed(&inv, "tier-2-app-a-0"), Settings{Workers: 2}, t.TempDir(), t.TempDir())
	validateConfig(t, ca, p)
}
