package dataplane

import (
	"path/filepath"
	"strconv"

	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform/lab/dataplane/envoycfg"
)

// proxy is one Envoy to run: its bootstrap, the certificates it needs and
// how to run it. Builders fill it from the inventory; install writes its
// files under Dir and starts it.
type proxy struct {
	Name    string // unique, also the directory under the installation's
	Dir     string // absolute directory of its files
	Role    metrics.Role
	Boot    envoycfg.Bootstrap
	Certs   []certFile
	Workers int
	UID     int      // every proxy runs as ProxyUID, as Istio's do
	Caps    []string // capabilities kept, as ambient ones (the node proxy's CAP_NET_ADMIN)
	// InDir runs Envoy in its directory, where relative paths in istiod's
	// configuration (the probe access log) land.
	InDir bool
}

// certFile is a workload certificate a proxy presents.
type certFile struct {
	Identity string
	Key      KeyType
	CertPath string
	KeyPath  string
}

// Files every proxy has in its directory.
const (
	configFile   = "envoy.json"
	rootFile     = "root.pem"
	adminSocket  = "admin.sock"
	probeLogFile = "probe.log"   // sidecar: inbound requests carrying the probe header
	connLogFile  = "connect.log" // HBONE terminations, while logged (connectTerminate)
)

func (p *proxy) path(name string) string { return filepath.Join(p.Dir, name) }

// cert adds a certificate for an identity and returns its TLS files.
func (p *proxy) cert(identity, fileStem string, kt KeyType) envoycfg.TLSCertificate {
	c := certFile{
		Identity: identity, Key: kt,
		CertPath: p.path(fileStem + "-cert.pem"), KeyPath: p.path(fileStem + "-key.pem"),
	}
	p.Certs = append(p.Certs, c)
	return envoycfg.TLSCertificate{
		CertificateChain: envoycfg.DataSource{Filename: c.CertPath},
		PrivateKey:       envoycfg.DataSource{Filename: c.KeyPath},
	}
}

// newProxy starts a proxy with Istio's bootstrap basics: node identity
// and admin (on a Unix socket here). Istio's limit on downstream
// connections (2^31-1) is left out: it is the same as none.
func newProxy(name, dir string, role metrics.Role, nodeID, cluster string, workers int) *proxy {
	p := &proxy{Name: name, Dir: dir, Role: role, Workers: workers, UID: proxyUID}
	p.Boot = envoycfg.Bootstrap{
		Node:  envoycfg.Node{ID: nodeID, Cluster: cluster},
		Admin: envoycfg.Admin{Address: envoycfg.PipeAddr(p.path(adminSocket))},
	}
	return p
}

func (p *proxy) addListener(l envoycfg.Listener) {
	p.Boot.StaticResources.Listeners = append(p.Boot.StaticResources.Listeners, l)
}

func (p *proxy) addCluster(c envoycfg.Cluster) {
	p.Boot.StaticResources.Clusters = append(p.Boot.StaticResources.Clusters, c)
}

// tunnels readies a proxy for HBONE: internal listeners on, and the reset
// behaviour of HBONE's other implementation. Since Envoy 1.38 a tunnelled
// TCP proxy turns an upstream stream reset into a TCP RST downstream. A
// CONNECT terminator resets the stream (NO_ERROR) right after a complete
// answer from a server that closes first (HTTP/1.0, Connection: close),
// so the RST overtook and discarded the answer; ztunnel closes with FIN
// after the data, and so does Envoy without these two runtime features.
func (p *proxy) tunnels() {
	p.Boot.BootstrapExtensions = []envoycfg.Extension{envoycfg.InternalListenerExtension()}
	p.Boot.LayeredRuntime = &envoycfg.LayeredRuntime{Layers: []envoycfg.RuntimeLayer{{
		Name: "hbone",
		StaticLayer: map[string]any{
			"envoy.reloadable_features.propagate_upstream_rst_through_tunneled_tcp_proxy": false,
			"envoy.reloadable_features.map_http_stream_reset_to_tcp_rst":                  false,
		},
	}, {Name: "admin", AdminLayer: &envoycfg.Empty{}}}}
}

// trustedCA is the root every proxy validates peers against.
func (p *proxy) trustedCA() envoycfg.DataSource {
	return envoycfg.DataSource{Filename: p.path(rootFile)}
}

// Istio's timeouts: connect 10s, no route or idle timeout on streams.
const (
	connectTimeout = "10s"
	noTimeout      = "0s"
	// cleanupInterval drops idle ORIGINAL_DST hosts, as Istio configures.
	cleanupInterval = "60s"
)

// passthroughCluster forwards to the original destination (Istio's
// PassthroughCluster for ALLOW_ANY outbound traffic).
func passthroughCluster(bind *envoycfg.BindConfig) envoycfg.Cluster {
	return envoycfg.Cluster{
		Name: "PassthroughCluster", Type: "ORIGINAL_DST", LbPolicy: "CLUSTER_PROVIDED",
		ConnectTimeout: connectTimeout, CleanupInterval: cleanupInterval,
		CircuitBreakers: envoycfg.IstioCircuitBreakers(), UpstreamBindConfig: bind,
	}
}

func passthroughChain() envoycfg.FilterChain {
	return envoycfg.FilterChain{
		Name: "PassthroughFilterChain",
		Filters: []envoycfg.Extension{envoycfg.TCPProxyFilter(envoycfg.TCPProxy{
			StatPrefix: "PassthroughCluster", Cluster: "PassthroughCluster",
		})},
	}
}

// hostPort joins an address and a port as Envoy's domains and authorities
// spell them.
func hostPort(host string, port int) string { return host + ":" + strconv.Itoa(port) }
