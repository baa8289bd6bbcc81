package envoycfg

// DynamicResources takes listeners and clusters from an aggregated xDS
// stream, as Istio's bootstrap does.
type DynamicResources struct {
	ADSConfig APIConfigSource `json:"ads_config"`
	LDSConfig ConfigSource    `json:"lds_config"`
	CDSConfig ConfigSource    `json:"cds_config"`
}

// APIConfigSource is a gRPC xDS source.
type APIConfigSource struct {
	APIType                   string        `json:"api_type"` // GRPC, DELTA_GRPC
	TransportAPIVersion       string        `json:"transport_api_version"`
	SetNodeOnFirstMessageOnly bool          `json:"set_node_on_first_message_only"`
	GRPCServices              []GRPCService `json:"grpc_services"`
}

// GRPCService names the cluster of a gRPC server.
type GRPCService struct {
	EnvoyGRPC EnvoyGRPC `json:"envoy_grpc"`
}

// EnvoyGRPC is a gRPC service reached through one of Envoy's clusters.
type EnvoyGRPC struct {
	ClusterName string `json:"cluster_name"`
}

// ConfigSource takes a resource type from the ADS stream.
type ConfigSource struct {
	ADS                 struct{} `json:"ads"`
	InitialFetchTimeout string   `json:"initial_fetch_timeout,omitempty"`
	ResourceAPIVersion  string   `json:"resource_api_version"`
}

// ADS is Istio's aggregated xDS configuration over the named cluster,
// delta (Istio's default) or state of the world.
func ADS(cluster string, delta bool) *DynamicResources {
	api := "GRPC"
	if delta {
		api = "DELTA_GRPC"
	}
	return &DynamicResources{
		ADSConfig: APIConfigSource{APIType: api, TransportAPIVersion: "V3", SetNodeOnFirstMessageOnly: true,
			GRPCServices: []GRPCService{{EnvoyGRPC: EnvoyGRPC{ClusterName: cluster}}}},
		LDSConfig: ConfigSource{InitialFetchTimeout: "0s", ResourceAPIVersion: "V3"},
		CDSConfig: ConfigSource{InitialFetchTimeout: "0s", ResourceAPIVersion: "V3"},
	}
}
