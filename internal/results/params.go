package results

// Scaling modes, as Scaling.Mode records them.
const (
	ScaleNone       = "none"       // the study runs as written
	ScaleFactor     = "factor"     // the user chose the factor (--scale)
	ScaleCalibrated = "calibrated" // measured from the meshes' capacities
	ScaleTenants    = "tenants"    // fewer tenants loaded, each at the study's rate where it fits
)

// TenantsParam is the parameter a tenant-scaled cell records its loaded
// tenant count under.
const TenantsParam = "tenants"

// The sweep parameters that change the graph itself rather than its
// shape: a profiling study (the profile preset) measures a proxy's unit
// costs at several payload sizes and protocols on one graph, and what
// calls made in parallel cost beyond the slowest of them. Each redeploys
// the workload.
const (
	// ParamPayload sets every service's (and version's) response size,
	// in bytes.
	ParamPayload = "payload"
	// ParamProtocol sets the entry's protocol and every call's.
	ParamProtocol = "protocol"
	// ParamFanout makes every call that many calls of its callee, made in
	// parallel.
	ParamFanout = "fanout"
)

// ParamUpload sends that many bytes of filler as each request's body (an
// upload); unlike the three above it changes only the load.
const ParamUpload = "upload"
