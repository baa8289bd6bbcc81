package cluster

import "github.com/meshbench/meshbench/internal/platform/resources"

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

// cpuShares maps the CPU request to cgroup v1 cpu.shares: 1024 per core,
// and the minimum of 2 (best effort) when there is no request.
func cpuShares(r resources.Requirements) uint64 {
	m := r.Effective().CPURequestMilli
	if m <= 0 {
		return minShares
	}
	s := uint64(m) * sharesPerCPU / milliCPUToCPU
	return min(max(s, minShares), maxShares)
}

// cpuWeight maps shares to cgroup v2 cpu.weight, with the formula the
// kubelet and runc share: [2, 262144] onto [1, 10000].
func cpuWeight(r resources.Requirements) uint64 {
	s := cpuShares(r)
	return minCPUWeight + ((s-minShares)*(maxCPUWeight-minCPUWeight))/(maxShares-minShares)
}

// cpuQuotaUS maps the CPU limit to a CFS quota per 100 ms period, or -1
// for no limit; at least 1 ms, as the kubelet enforces.
func cpuQuotaUS(r resources.Requirements) int64 {
	if r.CPULimitMilli <= 0 {
		return -1
	}
	return max(r.CPULimitMilli*cfsPeriodUS/milliCPUToCPU, minQuotaUS)
}
