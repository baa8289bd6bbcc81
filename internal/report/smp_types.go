package report

// The export is one JSON document holding SMP messages in proto3 JSON with
// the protos' field names. SMP defines the messages but no file that
// bundles them, so the envelope is ours; docs/report.md maps every field.
type smpExport struct {
	SMPVersion  string           `json:"smp_version"`
	Generator   string           `json:"generator"`
	Environment smpEnvironment   `json:"environment_config"`
	MeshConfigs []smpMeshConfig  `json:"service_mesh_configs"`
	TestConfigs []smpTestConfig  `json:"performance_test_configs"`
	Results     []smpTestResult  `json:"performance_test_results"`
	Omitted     []smpOmittedCell `json:"meshbench_excluded_cells,omitempty"`
}

type smpEnvironment struct {
	SMPVersion        string            `json:"smp_version"`
	ID                string            `json:"id"`
	Labels            map[string]string `json:"labels,omitempty"`
	KubernetesVersion string            `json:"kubernetes_version,omitempty"`
	Nodes             []smpNode         `json:"nodes,omitempty"`
}

type smpNode struct {
	Type  string `json:"type"`
	Cores int32  `json:"cores,omitempty"`
}

type smpMeshConfig struct {
	SMPVersion       string            `json:"smp_version"`
	ID               string            `json:"id"`
	Labels           map[string]string `json:"labels,omitempty"`
	IngressGateway   *smpUsage         `json:"ingress_gateway,omitempty"`
	Sidecar          *smpUsage         `json:"sidecar,omitempty"`
	MeshControlPlane *smpUsage         `json:"mesh_control_plane,omitempty"`
	MTLSEnabled      bool              `json:"mtls_enabled"`
	ProxyConcurrency int32             `json:"proxy_concurrency,omitempty"`
	MeshBuild        string            `json:"mesh_build,omitempty"`
	ProxyBuild       string            `json:"proxy_build,omitempty"`
	ExpGroupUUID     string            `json:"exp_group_uuid,omitempty"`
	Profile          string            `json:"profile,omitempty"`
	MeshType         *smpMeshType      `json:"mesh_type,omitempty"`
}

// smpUsage is the count, cpu_mcores and mem_mb shared by SMP's
// IngressGateway, Sidecar and MeshControlPlane messages.
type smpUsage struct {
	Count     int32 `json:"count"`
	CPUMcores int32 `json:"cpu_mcores"`
	MemMB     int32 `json:"mem_mb"`
}

type smpMeshType struct {
	Type    string `json:"type"`
	Version string `json:"version,omitempty"`
}

type smpTestConfig struct {
	SMPVersion string            `json:"smp_version"`
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Labels     map[string]string `json:"labels,omitempty"`
	Clients    []smpClient       `json:"clients"`
	Duration   string            `json:"duration,omitempty"`
}

type smpClient struct {
	Internal      bool     `json:"internal"`
	LoadGenerator string   `json:"load_generator"`
	Protocol      string   `json:"protocol"`
	Connections   int32    `json:"connections"`
	RPS           int64    `json:"rps,omitempty"`
	EndpointURLs  []string `json:"endpoint_urls,omitempty"`
}

type smpTestResult struct {
	SMPVersion   string            `json:"smp_version"`
	ID           string            `json:"id"`
	Labels       map[string]string `json:"labels"`
	StartTime    string            `json:"start_time"`
	EndTime      string            `json:"end_time"`
	LatenciesMs  smpLatency        `json:"latencies_ms"`
	ActualQPS    float64           `json:"actual_qps"`
	DetailsURI   string            `json:"details_uri"`
	TestID       string            `json:"test_id"`
	MeshConfigID string            `json:"mesh_config_id"`
	EnvID        string            `json:"env_id"`
}

type smpLatency struct {
	Min     float64 `json:"min"`
	Average float64 `json:"average"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	Max     float64 `json:"max"`
}

// smpOmittedCell records a cell SMP has no way to mark as unusable, so
// that an importer can see it was left out on purpose.
type smpOmittedCell struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}
