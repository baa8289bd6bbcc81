package dataplane

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/testenv"
)

var istiodWaypointPod = Pod{Namespace: "ns-1", Name: "waypoint-0", Node: "app", IP: netip.MustParseAddr("10.244.1.20"), ServiceAccount: "waypoint"}

func TestIstiodWaypointBootstrap(t *testing.T) {
	wp := istiodWaypointPod
	p := buildIstiodWaypoint(&wp, Settings{Workers: 2}, "/x/waypoint", "/x/istiod")
	b, err := json.Marshal(p.Boot)
	if err != nil {
		t.Fatal(err)
	}
	var boot struct {
		Node struct {
			ID       string         `json:"id"`
			Metadata map[string]any `json:"metadata"`
		} `json:"node"`
		Dynamic struct {
			ADS struct {
				APIType string `json:"api_type"`
			} `json:"ads_config"`
		} `json:"dynamic_resources"`
		Static struct {
			Listeners []any `json:"listeners"`
			Clusters  []struct {
				Name string `json:"name"`
			} `json:"clusters"`
		} `json:"static_resources"`
		Extensions []struct {
			Name string `json:"name"`
		} `json:"bootstrap_extensions"`
	}
	if err := json.Unmarshal(b, &boot); err != nil {
		t.Fatal(err)
	}
	// istiod takes the node type from the id: "waypoint" is what
	// `pilot-agent proxy waypoint` sends, at the pod's address.
	if boot.Node.ID != "waypoint~10.244.1.20~waypoint-0.ns-1~ns-1.svc.cluster.local" {
		t.Errorf("node id %s", boot.Node.ID)
	}
	md := boot.Node.Metadata
	labels, _ := md["LABELS"].(map[string]any)
	if md["NAMESPACE"] != "ns-1" || md["SERVICE_ACCOUNT"] != "waypoint" || md["INSTANCE_IPS"] != "10.244.1.20" ||
		labels["gateway.networking.k8s.io/gateway-name"] != "waypoint" || md["ISTIO_VERSION"] != istiod.ProxyVersion {
		t.Errorf("metadata: %v", md)
	}
	if _, ok := md["POD_PORTS"]; ok {
		t.Errorf("a waypoint's metadata names pod ports: %v", md)
	}
	if boot.Dynamic.ADS.APIType != "DELTA_GRPC" || len(boot.Static.Listeners) != 0 || len(boot.Static.Clusters) != 2 {
		t.Errorf("ads %+v, static listeners %v, clusters %v", boot.Dynamic.ADS, boot.Static.Listeners, boot.Static.Clusters)
	}
	// istiod's waypoint listeners are internal listeners (main_internal,
	// connect_originate), which Envoy loads only with the extension.
	if len(boot.Extensions) != 1 || boot.Extensions[0].Name != "envoy.bootstrap.internal_listener" {
		t.Errorf("bootstrap extensions: %v", boot.Extensions)
	}
	if !p.InDir {
		t.Error("the probe log's relative path needs Envoy run in its directory")
	}
}

func TestIntegrationEnvoyAcceptsIstiodWaypoint(t *testing.T) {
	testenv.Integration(t)
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	wp := istiodWaypointPod
	validateConfig(t, ca, buildIstiodWaypoint(&wp, Settings{Workers: 2}, t.TempDir(), t.TempDir()))
}
