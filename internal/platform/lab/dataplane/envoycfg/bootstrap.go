package envoycfg

// Bootstrap is an Envoy bootstrap with static resources only: meshbench
// writes one file per proxy instead of running an xDS server.
type Bootstrap struct {
	Node                Node            `json:"node"`
	Admin               Admin           `json:"admin"`
	StaticResources     StaticResources `json:"static_resources"`
	BootstrapExtensions []Extension     `json:"bootstrap_extensions,omitempty"`
	LayeredRuntime      *LayeredRuntime `json:"layered_runtime,omitempty"`
}

// LayeredRuntime holds runtime layers.
type LayeredRuntime struct {
	Layers []RuntimeLayer `json:"layers"`
}

// RuntimeLayer is a named layer of runtime keys: static, or the admin
// layer, which the admin interface's /runtime_modify changes.
type RuntimeLayer struct {
	Name        string         `json:"name"`
	StaticLayer map[string]any `json:"static_layer,omitempty"`
	AdminLayer  *Empty         `json:"admin_layer,omitempty"`
}

// Node identifies the proxy, as Istio's sidecar~IP~pod.ns~ns.svc.cluster.local.
type Node struct {
	ID      string `json:"id"`
	Cluster string `json:"cluster"`
}

// Admin is the admin interface; meshbench serves it on a Unix socket, so
// that it is reachable from the host whatever the proxy's namespace.
type Admin struct {
	Address Address `json:"address"`
}

// StaticResources are the proxy's listeners and clusters.
type StaticResources struct {
	Listeners []Listener `json:"listeners,omitempty"`
	Clusters  []Cluster  `json:"clusters,omitempty"`
}

// Address is a socket, pipe or internal-listener address.
type Address struct {
	SocketAddress        *SocketAddress        `json:"socket_address,omitempty"`
	Pipe                 *Pipe                 `json:"pipe,omitempty"`
	EnvoyInternalAddress *EnvoyInternalAddress `json:"envoy_internal_address,omitempty"`
}

// SocketAddress is an IP and port.
type SocketAddress struct {
	Address   string `json:"address"`
	PortValue int    `json:"port_value"`
}

// Pipe is a Unix socket path.
type Pipe struct {
	Path string `json:"path"`
}

// EnvoyInternalAddress names an internal listener; EndpointID keeps
// endpoints to the same listener apart.
type EnvoyInternalAddress struct {
	ServerListenerName string `json:"server_listener_name"`
	EndpointID         string `json:"endpoint_id,omitempty"`
}

// SockAddr is an IP:port address.
func SockAddr(ip string, port int) *Address {
	return &Address{SocketAddress: &SocketAddress{Address: ip, PortValue: port}}
}

// PipeAddr is a Unix socket address.
func PipeAddr(path string) Address { return Address{Pipe: &Pipe{Path: path}} }

// InternalAddr addresses an internal listener.
func InternalAddr(listener, endpointID string) *Address {
	return &Address{EnvoyInternalAddress: &EnvoyInternalAddress{ServerListenerName: listener, EndpointID: endpointID}}
}

// InternalListenerExtension enables internal listeners; a bootstrap that
// uses them must carry it.
func InternalListenerExtension() Extension {
	return Ext("envoy.bootstrap.internal_listener", "envoy.extensions.bootstrap.internal_listener.v3.InternalListener", nil)
}
