package cost

import (
	"encoding/json"
	"fmt"

	"github.com/meshbench/meshbench/internal/resources"
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
//
// It is not resources.Requirements: it has no limits, and it adds and
// subtracts (a node's allocatable less the pods packed on it), which
// requests and limits together do not; its quantity form is the cost
// files' on disk. The requests of a Requirements become one here.
type Resources struct {
	MilliCPU int64
	Bytes    int64
}

// ParseResources reads a CPU and a memory quantity such as "700m" and
// "500Mi"; an empty string is zero.
func ParseResources(cpu, memory string) (Resources, error) {
	c, err := resources.ParseCPU(cpu)
	if err != nil {
		return Resources{}, fmt.Errorf("cpu: %w", err)
	}
	m, err := resources.ParseMemory(memory)
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
	return resources.FormatCPU(r.MilliCPU) + " / " + resources.FormatMemory(r.Bytes)
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
	return json.Marshal(resourcesJSON{CPU: quantity(resources.FormatCPU(r.MilliCPU)), Memory: quantity(resources.FormatMemory(r.Bytes))})
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
