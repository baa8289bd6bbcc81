package cost

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/meshbench/meshbench/internal/topology"
)

// Byte sizes.
const (
	KiB = int64(1) << 10
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

// Resources is an amount of CPU and memory: a pod's requests, what a node
// offers pods, or a sum of them. In YAML and JSON it reads and writes as
// Kubernetes quantities: {cpu: 700m, memory: 500Mi}.
type Resources struct {
	MilliCPU int64
	Bytes    int64
}

// ParseResources reads a CPU and a memory quantity such as "700m" and
// "500Mi"; an empty string is zero.
func ParseResources(cpu, memory string) (Resources, error) {
	c, err := topology.ParseCPU(cpu)
	if err != nil {
		return Resources{}, fmt.Errorf("cpu: %w", err)
	}
	m, err := topology.ParseMemory(memory)
	if err != nil {
		return Resources{}, fmt.Errorf("memory: %w", err)
	}
	return Resources{MilliCPU: c, Bytes: m}, nil
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU + o.MilliCPU, Bytes: r.Bytes + o.Bytes}
}

// Sub returns r - o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU - o.MilliCPU, Bytes: r.Bytes - o.Bytes}
}

// Times returns r * n.
func (r Resources) Times(n int) Resources {
	return Resources{MilliCPU: r.MilliCPU * int64(n), Bytes: r.Bytes * int64(n)}
}

// String is the exact quantities, "700m / 500Mi".
func (r Resources) String() string {
	return cpuQuantity(r.MilliCPU) + " / " + memoryQuantity(r.Bytes)
}

// cpuQuantity writes millicores as a Kubernetes quantity: "8" or "7910m".
func cpuQuantity(m int64) string {
	if m%1000 == 0 {
		return strconv.FormatInt(m/1000, 10)
	}
	return strconv.FormatInt(m, 10) + "m"
}

// memoryQuantity writes bytes as the largest exact binary quantity.
func memoryQuantity(b int64) string {
	for _, u := range []struct {
		size   int64
		suffix string
	}{{GiB, "Gi"}, {MiB, "Mi"}, {KiB, "Ki"}} {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

type resourcesJSON struct {
	CPU    quantity `json:"cpu"`
	Memory quantity `json:"memory"`
}

// quantity is a Kubernetes quantity as a string, read from a JSON string or
// a bare number (YAML's `cpu: 1`).
type quantity string

func (q *quantity) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = quantity(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a quantity such as \"700m\" or 2, got %s", b)
	}
	*q = quantity(n)
	return nil
}

// MarshalJSON writes {"cpu": "700m", "memory": "500Mi"}.
func (r Resources) MarshalJSON() ([]byte, error) {
	return json.Marshal(resourcesJSON{CPU: quantity(cpuQuantity(r.MilliCPU)), Memory: quantity(memoryQuantity(r.Bytes))})
}

// UnmarshalJSON reads {"cpu": "700m", "memory": "500Mi"}; unknown fields
// are an error, so that a typo does not silently read as zero.
func (r *Resources) UnmarshalJSON(b []byte) error {
	var q resourcesJSON
	if err := strictJSON(b, &q); err != nil {
		return err
	}
	v, err := ParseResources(string(q.CPU), string(q.Memory))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
