package cost

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/meshbench/meshbench/internal/topology"
)

// Workload is the application side of an allocation: the pods of one
// namespace, repeated in every namespace.
type Workload struct {
	Name       string  `json:"name"`
	Namespaces int     `json:"namespaces"`
	Pods       []Shape `json:"pods"`
}

// WorkloadFromGraph takes one namespace's pods from a service graph: one
// kind per deployment, with its replicas and requests.
func WorkloadFromGraph(g *topology.Graph, namespaces int) (Workload, error) {
	if namespaces < 1 {
		return Workload{}, fmt.Errorf("namespaces must be at least 1")
	}
	w := Workload{Name: g.Name, Namespaces: namespaces}
	for _, d := range g.Deployments() {
		req := d.Resources.Requirements()
		r := Resources{MilliCPU: req.CPURequestMilli, Bytes: req.MemRequestBytes}
		w.Pods = append(w.Pods, Shape{Name: d.Name, Requests: r, Count: d.Replicas})
	}
	return w, nil
}

// Row is one mesh's allocation: the nodes its requests need and what they
// cost.
type Row struct {
	Mesh    string `json:"mesh"`
	Machine string `json:"machine"`
	// Nodes is the fewest nodes the pods pack onto.
	Nodes int `json:"nodes"`
	// PackingOptimal is false when the search ran out of budget and Nodes
	// may be one or more above the fewest.
	PackingOptimal bool `json:"packing_optimal"`
	// IdealNodes is the requests divided by what a node offers, as if pods
	// could be split: the "perfect tetris" figure.
	IdealNodes       float64 `json:"ideal_nodes"`
	MonthlyCost      float64 `json:"monthly_cost"`
	IdealMonthlyCost float64 `json:"ideal_monthly_cost"`
	// IncreasePct is the monthly cost over the baseline's, in percent;
	// IdealIncreasePct the same for the ideal figures.
	IncreasePct      float64 `json:"increase_pct"`
	IdealIncreasePct float64 `json:"ideal_increase_pct"`
	// Pods counts the scheduled pods, DaemonSet pods not included.
	Pods int `json:"pods"`
	// Requests is everything requested: the pods and a DaemonSet set on
	// every node.
	Requests Resources `json:"requests"`
	// PublishedIncreasePct is a study's own figure, when one is compared.
	PublishedIncreasePct *float64 `json:"published_increase_pct,omitempty"`
}

// Allocate packs the workload with each mesh's footprint onto nodes of the
// machine type and prices them. The first row is always the baseline (no
// mesh), which every increase is measured from; a "baseline" among meshes
// is not repeated.
func Allocate(w Workload, m MachineType, meshes []Footprint) ([]Row, error) {
	return allocateAll(m, scenarios(w, meshes))
}

// allocateAll packs and prices each scenario; the first is the baseline
// every increase is measured from.
func allocateAll(m MachineType, runs []scenario) ([]Row, error) {
	alloc, err := m.NodeAllocatable()
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, s := range runs {
		r, err := allocate(s.w, m, alloc, s.f)
		if err != nil {
			return nil, fmt.Errorf("mesh %s on %s: %w", s.f.Name, m.Name, err)
		}
		if len(rows) > 0 && rows[0].MonthlyCost > 0 {
			r.IncreasePct = round((r.MonthlyCost/rows[0].MonthlyCost-1)*100, 2)
			r.IdealIncreasePct = round((r.IdealMonthlyCost/rows[0].IdealMonthlyCost-1)*100, 2)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// MarshalJSON writes an increase over a baseline that costs nothing, an
// infinity that JSON cannot hold, as null.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	if finite(r.IncreasePct) != nil && finite(r.IdealIncreasePct) != nil {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		IncreasePct      *float64 `json:"increase_pct"`
		IdealIncreasePct *float64 `json:"ideal_increase_pct"`
	}{plain(r), finite(r.IncreasePct), finite(r.IdealIncreasePct)})
}

func allocate(w Workload, m MachineType, alloc Resources, f Footprint) (Row, error) {
	var pods []Shape
	for _, s := range w.Pods {
		if f.Sidecar != nil {
			s.Requests = s.Requests.Add(f.Sidecar.Requests)
		}
		s.Count *= w.Namespaces
		pods = append(pods, s)
	}
	for _, c := range f.ControlPlane {
		pods = append(pods, Shape{Name: c.Name, Requests: c.Requests, Count: c.replicas()})
	}
	for _, c := range f.PerNamespace {
		pods = append(pods, Shape{Name: c.Name, Requests: c.Requests, Count: c.replicas() * w.Namespaces})
	}
	var daemons Resources
	for _, c := range f.PerNode {
		daemons = daemons.Add(c.Requests)
	}
	bin := Bin{Capacity: alloc.Sub(daemons)}
	if m.MaxPods > 0 {
		bin.Pods = m.MaxPods - len(f.PerNode)
	}
	if bin.Capacity.MilliCPU <= 0 || bin.Capacity.Bytes <= 0 || (m.MaxPods > 0 && bin.Pods <= 0) {
		return Row{}, fmt.Errorf("its per-node pods (%v) leave no room on a node that offers %v and %d pods", daemons, alloc, m.MaxPods)
	}
	p, err := Pack(pods, bin)
	if err != nil {
		return Row{}, err
	}
	var total Resources
	count := 0
	for _, s := range pods {
		total = total.Add(s.Requests.Times(s.Count))
		count += s.Count
	}
	// N nodes offer N x (allocatable - DaemonSets) to the other pods, so
	// the ideal N is their total over that, in the scarcer resource.
	ideal := max(float64(total.MilliCPU)/float64(bin.Capacity.MilliCPU), float64(total.Bytes)/float64(bin.Capacity.Bytes))
	return Row{
		Mesh:             f.Name,
		Machine:          m.Name,
		Nodes:            p.Nodes,
		PackingOptimal:   p.Optimal,
		IdealNodes:       round(ideal, 3),
		MonthlyCost:      round(float64(p.Nodes)*m.MonthlyUSD, 2),
		IdealMonthlyCost: round(ideal*m.MonthlyUSD, 2),
		Pods:             count,
		Requests:         total.Add(daemons.Times(p.Nodes)),
	}, nil
}

// round rounds v to the given decimal places, for figures meant to be read.
func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
