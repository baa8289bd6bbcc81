// Package resources is a container's CPU and memory requests and limits,
// the one parsed shape every platform, the metrics, the topology and the
// cost model convert to, read from Kubernetes quantities with
// apimachinery's resource.Quantity.
package resources

import (
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Requirements are a container's requests and limits in millicores and
// bytes, zero meaning unset, as Kubernetes specifies them. Embedded in a
// JSON record they write as cpu_request_m, cpu_limit_m, mem_request_bytes
// and mem_limit_bytes.
//
// Two other types hold requests on disk, each converting to this one at
// its edge: topology.Resources, the graph file's quantities as written,
// and cost.Resources, an amount of CPU and memory. Each is written in its
// own encoding in a results directory, so one type for all three would
// change the results format (docs/development.md says how).
type Requirements struct {
	CPURequestMilli int64 `json:"cpu_request_m,omitempty"`
	CPULimitMilli   int64 `json:"cpu_limit_m,omitempty"`
	MemRequestBytes int64 `json:"mem_request_bytes,omitempty"`
	MemLimitBytes   int64 `json:"mem_limit_bytes,omitempty"`
}

// Parse reads requests and limits given as quantities ("700m", "500Mi");
// an empty string is unset. Errors name the field.
func Parse(cpuRequest, cpuLimit, memRequest, memLimit string) (Requirements, error) {
	var r Requirements
	var err error
	if r.CPURequestMilli, err = ParseCPU(cpuRequest); err != nil {
		return Requirements{}, fmt.Errorf("cpu_request: %w", err)
	}
	if r.CPULimitMilli, err = ParseCPU(cpuLimit); err != nil {
		return Requirements{}, fmt.Errorf("cpu_limit: %w", err)
	}
	if r.MemRequestBytes, err = ParseMemory(memRequest); err != nil {
		return Requirements{}, fmt.Errorf("memory_request: %w", err)
	}
	if r.MemLimitBytes, err = ParseMemory(memLimit); err != nil {
		return Requirements{}, fmt.Errorf("memory_limit: %w", err)
	}
	return r, nil
}

// Effective returns the requirements after Kubernetes' API defaulting:
// a limit without a request is also the request.
func (r Requirements) Effective() Requirements {
	if r.CPURequestMilli == 0 && r.CPULimitMilli > 0 {
		r.CPURequestMilli = r.CPULimitMilli
	}
	if r.MemRequestBytes == 0 && r.MemLimitBytes > 0 {
		r.MemRequestBytes = r.MemLimitBytes
	}
	return r
}

// WithRequests returns r with its requests replaced by the given ones
// where they are set, raising a set limit to at least the new request, as
// a limit below its request is invalid in Kubernetes.
func (r Requirements) WithRequests(cpuMilli, memBytes int64) Requirements {
	if cpuMilli > 0 {
		r.CPURequestMilli = cpuMilli
		if r.CPULimitMilli > 0 {
			r.CPULimitMilli = max(r.CPULimitMilli, cpuMilli)
		}
	}
	if memBytes > 0 {
		r.MemRequestBytes = memBytes
		if r.MemLimitBytes > 0 {
			r.MemLimitBytes = max(r.MemLimitBytes, memBytes)
		}
	}
	return r
}

var (
	maxMilli = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	maxBytes = resource.NewQuantity(math.MaxInt64, resource.BinarySI)
)

// parse reads a non-negative quantity no larger than limit.
func parse(q string, limit *resource.Quantity) (resource.Quantity, error) {
	v, err := resource.ParseQuantity(q)
	if err != nil || v.Sign() < 0 {
		return v, fmt.Errorf("quantity %q: want a non-negative Kubernetes quantity such as \"700m\" or \"500Mi\"", q)
	}
	// ParseQuantity caps what it cannot hold at the int64 maximum.
	if v.Cmp(*limit) >= 0 {
		return v, fmt.Errorf("quantity %q: too large", q)
	}
	return v, nil
}

// ParseCPU returns a CPU quantity ("700m", "2", "0.5") in millicores,
// rounded up as Kubernetes rounds (0.1m is 1m). The empty string is 0.
func ParseCPU(q string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	v, err := parse(q, maxMilli)
	if err != nil {
		return 0, err
	}
	return v.ScaledValue(resource.Milli), nil
}

// ParseMemory returns a memory quantity ("500Mi", "2Gi", "128M") in bytes,
// rounded up. The empty string is 0.
func ParseMemory(q string) (int64, error) {
	if q == "" {
		return 0, nil
	}
	v, err := parse(q, maxBytes)
	if err != nil {
		return 0, err
	}
	return v.Value(), nil
}

// FormatCPU writes millicores as a Kubernetes quantity: "8" or "7910m".
func FormatCPU(m int64) string {
	if m%1000 == 0 {
		return strconv.FormatInt(m/1000, 10)
	}
	return strconv.FormatInt(m, 10) + "m"
}

// FormatMemory writes bytes as the largest exact binary quantity ("2Gi",
// "500Mi"), or as plain bytes.
func FormatMemory(b int64) string {
	for _, u := range []struct {
		size   int64
		suffix string
	}{{1 << 30, "Gi"}, {1 << 20, "Mi"}, {1 << 10, "Ki"}} {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}
