package cluster

// Resources are a container's requests and limits: millicores and bytes,
// zero meaning unset, as Kubernetes specifies them.
type Resources struct {
	CPURequestMilli int64 `json:"cpu_request_m,omitempty"`
	CPULimitMilli   int64 `json:"cpu_limit_m,omitempty"`
	MemRequestBytes int64 `json:"mem_request_bytes,omitempty"`
	MemLimitBytes   int64 `json:"mem_limit_bytes,omitempty"`
}

// The kubelet's constants for turning requests and limits into cgroup
// values (pkg/kubelet/cm/helpers_linux.go).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	cfsPeriodUS   = 100000
	minQuotaUS    = 1000
	maxCPUWeight  = 10000
	minCPUWeight  = 1
	milliCPUToCPU = 1000
)

// cpuRequest is the request the kubelet acts on: a container with a limit
// and no request gets a request equal to its limit (API defaulting).
func (r Resources) cpuRequest() int64 {
	if r.CPURequestMilli == 0 && r.CPULimitMilli > 0 {
		return r.CPULimitMilli
	}
	return r.CPURequestMilli
}

// cpuShares maps the CPU request to cgroup v1 cpu.shares: 1024 per core,
// and the minimum of 2 (best effort) when there is no request.
func (r Resources) cpuShares() uint64 {
	m := r.cpuRequest()
	if m <= 0 {
		return minShares
	}
	s := uint64(m) * sharesPerCPU / milliCPUToCPU
	return min(max(s, minShares), maxShares)
}

// cpuWeight maps shares to cgroup v2 cpu.weight, with the formula the
// kubelet and runc share: [2, 262144] onto [1, 10000].
func (r Resources) cpuWeight() uint64 {
	s := r.cpuShares()
	return minCPUWeight + ((s-minShares)*(maxCPUWeight-minCPUWeight))/(maxShares-minShares)
}

// cpuQuotaUS maps the CPU limit to a CFS quota per 100 ms period, or -1
// for no limit; at least 1 ms, as the kubelet enforces.
func (r Resources) cpuQuotaUS() int64 {
	if r.CPULimitMilli <= 0 {
		return -1
	}
	return max(r.CPULimitMilli*cfsPeriodUS/milliCPUToCPU, minQuotaUS)
}

// effective returns the resources after Kubernetes' defaulting: a limit
// without a request is also the request.
func (r Resources) effective() Resources {
	r.CPURequestMilli = r.cpuRequest()
	if r.MemRequestBytes == 0 && r.MemLimitBytes > 0 {
		r.MemRequestBytes = r.MemLimitBytes
	}
	return r
}
