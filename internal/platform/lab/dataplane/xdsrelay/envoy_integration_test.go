package xdsrelay_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	bootstrap "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	sfs "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/set_filter_state/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/meshbench/meshbench/internal/platform/lab/dataplane"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/xdsrelay"
	"github.com/meshbench/meshbench/internal/testenv"
)

// TestIntegrationEnvoyLoadsScrubbed has upstream Envoy validate the
// Istio-shaped listener and cluster: it rejects them as istiod sends them,
// naming an Istio-only extension, and accepts them after Scrub; and it
// rejects them again when any one of Scrub's changes is undone.
func TestIntegrationEnvoyLoadsScrubbed(t *testing.T) {
	testenv.Integration(t)
	envoy, err := dataplane.FindEnvoy()
	testenv.Need(t, err == nil, "Envoy: %v", err)

	l, c := xdsrelay.SidecarInbound(t), xdsrelay.OutboundCluster(t)
	l.Address = &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
		Address: "127.0.0.1", PortSpecifier: &core.SocketAddress_PortValue{PortValue: 15006}}}}
	c.ClusterDiscoveryType = &cluster.Cluster_Type{Type: cluster.Cluster_STATIC}
	c.ConnectTimeout = durationpb.New(1e9)
	c.LoadAssignment = &endpoint.ClusterLoadAssignment{ClusterName: c.GetName()}
	var opts upstreamhttp.HttpProtocolOptions
	key := "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
	if err := c.GetTypedExtensionProtocolOptions()[key].UnmarshalTo(&opts); err != nil {
		t.Fatal(err)
	}
	opts.UpstreamProtocolOptions = &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
		ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &core.Http1ProtocolOptions{}}}}
	a, err := anypb.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	c.TypedExtensionProtocolOptions[key] = a

	// The clusters the inbound listener names.
	var named []*cluster.Cluster
	for _, n := range []string{"inbound|8080||", "InboundPassthroughCluster"} {
		named = append(named, &cluster.Cluster{Name: n, ConnectTimeout: durationpb.New(1e9),
			ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STATIC},
			LoadAssignment:       &endpoint.ClusterLoadAssignment{ClusterName: n}})
	}
	validate := func(l *listener.Listener, c *cluster.Cluster) (string, error) {
		b, err := proto.Marshal(&bootstrap.Bootstrap{StaticResources: &bootstrap.Bootstrap_StaticResources{
			Listeners: []*listener.Listener{l}, Clusters: append([]*cluster.Cluster{c}, named...)}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "bootstrap.pb")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(envoy, "--mode", "validate", "-c", path, "--disable-hot-restart", "-l", "warning").CombinedOutput()
		return string(out), err
	}
	if out, err := validate(l, c); err == nil || !strings.Contains(out, "Didn't find a registered implementation") {
		t.Fatalf("istiod's resources as sent: Envoy did not reject an Istio-only extension (err %v):\n%s", err, out)
	}

	scrub := func(m proto.Message) proto.Message {
		a, err := anypb.New(m)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := xdsrelay.Scrub(a)
		if err != nil {
			t.Fatal(err)
		}
		res, err := out.UnmarshalNew()
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sl, sc := scrub(l).(*listener.Listener), scrub(c).(*cluster.Cluster)
	if out, err := validate(sl, sc); err != nil {
		t.Fatalf("scrubbed resources: Envoy rejected them: %v\n%s", err, out)
	}

	// Each change is needed: undoing any one of them alone, Envoy rejects.
	rejects := func(what string, l *listener.Listener, c *cluster.Cluster) {
		t.Helper()
		if out, err := validate(l, c); err == nil {
			t.Errorf("%s: Envoy accepted it, so the relay need not change it:\n%s", what, out)
		}
	}
	for _, f := range c.GetFilters() {
		c2 := proto.Clone(sc).(*cluster.Cluster)
		c2.Filters = []*cluster.Filter{f}
		rejects("cluster filter "+f.GetName(), sl, c2)
	}
	l2 := proto.Clone(sl).(*listener.Listener)
	fc := l2.GetFilterChains()[0]
	fc.Filters = append([]*listener.Filter{l.GetFilterChains()[0].GetFilters()[0]}, fc.GetFilters()...)
	rejects("network filter "+fc.GetFilters()[0].GetName(), l2, sc)
	for i, f := range hcmOf(t, sl).GetHttpFilters() {
		if !f.GetIsOptional() {
			continue
		}
		l2 := proto.Clone(sl).(*listener.Listener)
		conn := hcmOf(t, l2)
		conn.GetHttpFilters()[i].IsOptional = false
		setHCM(t, l2, conn)
		rejects("http filter "+f.GetName()+" not optional", l2, sc)
	}
	l2 = proto.Clone(sl).(*listener.Listener)
	conn := hcmOf(t, l2)
	var sf sfs.Config
	if err := conn.GetHttpFilters()[2].GetTypedConfig().UnmarshalTo(&sf); err != nil {
		t.Fatal(err)
	}
	sf.GetOnRequestHeaders()[0].FactoryKey = "istio.hashable_string"
	a, err = anypb.New(&sf)
	if err != nil {
		t.Fatal(err)
	}
	conn.GetHttpFilters()[2].ConfigType = &hcm.HttpFilter_TypedConfig{TypedConfig: a}
	setHCM(t, l2, conn)
	rejects("factory istio.hashable_string", l2, sc)
}

// hcmOf is the connection manager of a listener's first filter chain.
func hcmOf(t *testing.T, l *listener.Listener) *hcm.HttpConnectionManager {
	t.Helper()
	fs := l.GetFilterChains()[0].GetFilters()
	var conn hcm.HttpConnectionManager
	if err := fs[len(fs)-1].GetTypedConfig().UnmarshalTo(&conn); err != nil {
		t.Fatal(err)
	}
	return &conn
}

func setHCM(t *testing.T, l *listener.Listener, conn *hcm.HttpConnectionManager) {
	t.Helper()
	a, err := anypb.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	fs := l.GetFilterChains()[0].GetFilters()
	fs[len(fs)-1].ConfigType = &listener.Filter_TypedConfig{TypedConfig: a}
}
