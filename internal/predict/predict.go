package predict

import (
	"fmt"
	"slices"

	"github.com/meshbench/meshbench/internal/cost"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/topology"
)

// Validated is the error class the predictor was checked to on the lab by
// bench/predict (docs/predict.md quotes the run), which predict prints
// beside its figures.
const Validated = "bench/predict on a 2-core lab at 25 req/s per tenant: memory within 13% (under), CPU -11% to +45% (8 of 12 within 20%), added p50 -66% to +30% on bookinfo and -67% to +7% on tiered, under where tenants queue for the host's CPUs, which the model leaves out: indicative only (docs/predict.md)"

// Options are a prediction's inputs beside the profile.
type Options struct {
	Graph     *topology.Graph
	GraphName string // as the user gave it: a built-in's name or a file
	Scale
	// Machine is the cost model's machine type (default cost.DefaultNode);
	// Nodes, when 0, is the count its bin-packing gives each mesh.
	Machine string
	// Meshes to predict, by name; empty means every mesh of the profile.
	Meshes []string
}

// Prediction is what each mesh is predicted to add to the graph.
type Prediction struct {
	Profile   string     `json:"profile"`
	Host      string     `json:"profiled_on"`
	Graph     string     `json:"graph"`
	Scale     ScaleJSON  `json:"scale"`
	Machine   string     `json:"machine"`
	Prices    string     `json:"prices"`
	Validated string     `json:"validated"`
	Meshes    []MeshFigs `json:"meshes"`
	Notes     []string   `json:"notes"`
}

// ScaleJSON is the scale as written in a prediction.
type ScaleJSON struct {
	Namespaces  int     `json:"namespaces"`
	Rate        float64 `json:"rate_per_namespace_rps"`
	Connections int     `json:"connections_per_namespace"`
	Nodes       int     `json:"node_proxy_nodes,omitempty"`
}

// MeshFigs is one mesh's predicted figures: added latency at the entry in
// milliseconds, the data plane's CPU and memory per role and in total,
// and the nodes and monthly dollars the cost model gives.
type MeshFigs struct {
	Mesh    string   `json:"mesh"`
	Profile string   `json:"profile"`
	P50     Interval `json:"added_p50_ms"`
	P95     Interval `json:"added_p95_ms"`
	P99     Interval `json:"added_p99_ms"`
	Roles   []Usage  `json:"roles"`
	// LatencyAt is the chain's entry rate the hops are read at: the busy
	// rate of the least busy shared proxy (Usage.ReadAt), else the entry
	// rate.
	LatencyAt float64  `json:"latency_read_at_rps"`
	Cores     Interval `json:"cores"`
	Mem       Interval `json:"mem_bytes"`
	// Nodes and NodesMonthly are the allocation: the pods' requests with
	// the mesh's footprint packed onto Machine; ConsumedMonthly prices
	// the predicted cores and memory at the unit prices.
	Nodes           int      `json:"nodes"`
	NodesMonthly    float64  `json:"nodes_monthly_usd"`
	ConsumedMonthly Interval `json:"consumed_monthly_usd"`
}

// Predict predicts each mesh's figures for the options' graph and scale.
// It refuses, before computing anything, a graph the profile does not
// cover and a scale it cannot use.
func Predict(p *UnitCosts, o Options) (*Prediction, error) {
	if err := o.Scale.check(); err != nil {
		return nil, err
	}
	if err := p.Cover(o.Graph); err != nil {
		return nil, err
	}
	meshes := o.Meshes
	if len(meshes) == 0 {
		for _, m := range p.Meshes {
			meshes = append(meshes, m.Name)
		}
	}
	var names []string
	for _, m := range p.Meshes {
		names = append(names, m.Name)
	}
	for _, n := range meshes {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("--mesh %q: the profile has no such mesh; it has %v", n, names)
		}
	}
	machineName := o.Machine
	if machineName == "" {
		machineName = cost.DefaultNode
	}
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return nil, err
	}
	machine, err := catalog.Machine(machineName)
	if err != nil {
		return nil, fmt.Errorf("--machine: %w", err)
	}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return nil, err
	}
	w, err := cost.WorkloadFromGraph(o.Graph, o.Namespaces)
	if err != nil {
		return nil, err
	}
	out := &Prediction{
		Profile: p.Source, Host: host(p), Graph: o.GraphName, Machine: machine.Name, Prices: prices.Source, Validated: Validated,
		Scale: ScaleJSON{Namespaces: o.Namespaces, Rate: o.Rate, Connections: o.Connections, Nodes: o.Nodes},
		Notes: []string{
			"Added latency is at the entry, over the baseline: each hop's added-latency distribution (profiled), summed along the calls in sequence and maximized over parallel calls, as if hops were independent, plus, for each parallel call beyond the first, what the profile's fan-out cell measured a second one to add (parallel calls cross the same proxies and wait for each other there).",
			"CPU and memory are the mesh's proxies (and control plane where it runs one) only; the application's own cost is not predicted.",
			"A proxy costs more per request, and adds more latency, when requests come seldom (each wakes it). Each role is read where the profile's chain kept one instance as busy (Read at): each sidecar where a chain pod of its kind carried as many requests a second as its pod does, a shared proxy (node proxy, waypoint), which carries the hops of every namespace on its node or in its namespace, higher; a mesh's hops at its least busy shared proxy's rate.",
			"Intervals carry the profile's spread: each CPU figure's samples, the quantiles' 95% bounds; nodes come from requests, not usage, and have none.",
		},
	}
	if len(p.Noisy) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of the profile's cells were measured with host noise above the run's threshold (noisy_cells in the profile); their figures are used.", len(p.Noisy)))
	}
	lo, hi := p.rates()
	if lo <= hi && (o.Rate < lo || o.Rate > hi) {
		out.Notes = append(out.Notes, fmt.Sprintf("Each namespace's rate, %g req/s, is outside the rates the profile measured (%g to %g req/s): CPU is read on the nearest line, extended, and latency at the nearest rate.", o.Rate, lo, hi))
	}
	for _, name := range meshes {
		m, _ := p.Mesh(name)
		f := MeshFigs{Mesh: m.Name, Profile: m.Profile}
		fp, err := footprintOf(m.Profile)
		if err != nil {
			return nil, err
		}
		rows, err := cost.Allocate(w, machine, []cost.Footprint{fp})
		if err != nil {
			return nil, fmt.Errorf("mesh %s: %w", name, err)
		}
		row := rows[len(rows)-1]
		f.Nodes, f.NodesMonthly = row.Nodes, row.MonthlyCost
		sc := o.Scale
		if sc.Nodes == 0 {
			sc.Nodes = row.Nodes
		}
		d := deploy(o.Graph, sc)
		f.LatencyAt = d.latencyRate(m)
		if m.Parallel == nil && len(m.Hops) > 0 && parallel(o.Graph) {
			out.Notes = append(out.Notes, fmt.Sprintf("Mesh %s: the profile has no fan-out cell (an older profile, or the cell failed): the graph's parallel calls are taken as independent, which reads their added latency low.", m.Name))
		}
		if len(m.Hops) > 0 {
			var ds [3]Dist
			for k := range ds {
				ds[k] = m.latency(p.Reference, o.Graph, f.LatencyAt, k)
			}
			at := func(q float64) Interval {
				return Interval{ds[0].Quantile(q), ds[1].Quantile(q), ds[2].Quantile(q)}
			}
			f.P50, f.P95, f.P99 = at(0.5), at(0.95), at(0.99)
		}
		f.Roles = m.usage(p.Reference, o.Graph, d)
		for _, u := range f.Roles {
			f.Cores, f.Mem = f.Cores.Add(u.Cores), f.Mem.Add(u.MemBytes)
			// The entry rate's own note covers a role read at it.
			for _, at := range []float64{u.ReadLow, u.ReadAt} {
				if at > 0 && at != o.Rate && (at < lo || at > hi) {
					out.Notes = append(out.Notes, fmt.Sprintf("Mesh %s: its %s is as busy as the profile's chain at %.3g req/s, outside the rates the profile measured (%g to %g req/s): read on the nearest line, extended.", m.Name, u.Role, at, lo, hi))
				}
			}
		}
		gib := float64(cost.GiB)
		f.ConsumedMonthly = Interval{
			f.Cores.V*prices.PerVCPUMonth + f.Mem.V/gib*prices.PerGBMonth,
			f.Cores.Lo*prices.PerVCPUMonth + f.Mem.Lo/gib*prices.PerGBMonth,
			f.Cores.Hi*prices.PerVCPUMonth + f.Mem.Hi/gib*prices.PerGBMonth,
		}
		out.Meshes = append(out.Meshes, f)
	}
	return out, nil
}

// parallel says whether any script of the graph makes calls in parallel.
func parallel(g *topology.Graph) bool {
	for _, s := range g.Services {
		for _, v := range versionsOf(&s) {
			for _, st := range v.script {
				if len(st.Calls()) > 1 {
					return true
				}
			}
		}
	}
	return false
}

// footprintOf is the cost model's footprint for a profile, the one the
// registry gives it.
func footprintOf(profile string) (cost.Footprint, error) {
	pr, ok := mesh.LookupProfile(profile)
	if !ok {
		return cost.Footprint{}, fmt.Errorf("mesh profile %q: unknown to this meshbench", profile)
	}
	if pr.Footprint == nil {
		return cost.Footprint{}, fmt.Errorf("mesh profile %q: the cost model has no footprint to price it", profile)
	}
	return cost.FromMesh(*pr.Footprint), nil
}

// host says where the profile was measured.
func host(p *UnitCosts) string {
	i := p.Provenance.Platform
	return fmt.Sprintf("%s, %d CPUs, kernel %s, Envoy %s", i.CPUModel, i.CPUs, i.Kernel, i.EnvoyVersion)
}
