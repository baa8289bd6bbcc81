package cost

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/meshbench/meshbench/internal/topology"
)

// DefaultNode is the machine type used when neither the options nor an
// example name one.
const DefaultNode = "n2-standard-8"

// Options are the inputs of `meshbench cost`. Zero values take the
// example's inputs, when an example is named, else the defaults.
type Options struct {
	// Example names a built-in study's inputs, e.g. "solo-2024".
	Example string
	// Workload is a built-in service graph (tiered, bookinfo, boutique) or
	// a graph file; Namespaces is how many copies of it run (default 1).
	Workload   string
	Namespaces int
	// PodCPU and PodMemory replace every application pod's requests.
	PodCPU    string
	PodMemory string
	// Node is the machine type (default DefaultNode).
	Node string
	// Meshes to price; empty means every footprint. The baseline is
	// always priced.
	Meshes         []string
	CatalogFile    string
	FootprintsFile string
	// Output is "text" (default) or "json".
	Output string

	// UsageFile switches to the consumption model: a YAML or JSON list of
	// Usage records, priced at unit prices.
	UsageFile string
	// VCPUMonth and GBMonth give the unit prices directly; otherwise they
	// are derived from CPUPair and MemPair (machine-type names; defaults as
	// the Istio blog: n2-standard-4 vs n2-highmem-2, n2-highmem-4 vs
	// n2-standard-4).
	VCPUMonth float64
	GBMonth   float64
	CPUPair   []string
	MemPair   []string
	// ProjectRPS and ProjectNodes scale the consumption to a user's own
	// request rate and node count; zero keeps the measured figure.
	ProjectRPS   float64
	ProjectNodes int
	// Extrapolate lets --results project the fitted CPU to a ProjectRPS
	// beyond a mesh's measured capacity, where the line is not measured.
	Extrapolate bool

	// ResultsDir switches to pricing a study's results directory: its
	// measured consumption and its recorded requests on Node.
	ResultsDir string
}

// Run prices the options' scenario and writes the result to w.
func Run(w io.Writer, o Options) error {
	if o.Output != "" && o.Output != "text" && o.Output != "json" {
		return fmt.Errorf("--output %q: want text or json", o.Output)
	}
	catalog, err := LoadCatalog(o.CatalogFile)
	if err != nil {
		return err
	}
	if o.Extrapolate && o.ResultsDir == "" {
		return fmt.Errorf("--extrapolate projects a study's fitted CPU: give --results DIR and --rps")
	}
	if o.ResultsDir != "" {
		r, err := EstimateResults(o, catalog)
		if err != nil {
			return err
		}
		return r.Write(w, o.Output)
	}
	if o.UsageFile != "" {
		c, err := EstimateConsumption(o, catalog)
		if err != nil {
			return err
		}
		return c.Write(w, o.Output)
	}
	e, err := EstimateAllocation(o, catalog)
	if err != nil {
		return err
	}
	return e.Write(w, o.Output)
}

// AllocationEstimate is an allocation with the assumptions it rests on.
type AllocationEstimate struct {
	Title       string   `json:"title"`
	Assumptions []string `json:"assumptions"`
	Rows        []Row    `json:"rows"`
}

// EstimateAllocation resolves the options into a workload, a machine type
// and footprints, and allocates them.
func EstimateAllocation(o Options, catalog *Catalog) (*AllocationEstimate, error) {
	var ex *Example
	if o.Example != "" {
		e, err := LookupExample(o.Example)
		if err != nil {
			return nil, err
		}
		ex = &e
		o.Workload = cmp.Or(o.Workload, e.Workload)
		o.Node = cmp.Or(o.Node, e.Node)
		if o.Namespaces == 0 {
			o.Namespaces = e.Namespaces
		}
		if len(o.Meshes) == 0 {
			o.Meshes = e.Meshes
		}
	}
	if o.Workload == "" {
		return nil, fmt.Errorf("no workload: give --workload (a built-in graph, %v, or a graph file) or --example solo-2024", topology.BuiltinNames())
	}
	o.Node = cmp.Or(o.Node, DefaultNode)
	if o.Namespaces == 0 {
		o.Namespaces = 1
	}
	g, err := topology.Load(o.Workload)
	if err != nil {
		return nil, err
	}
	w, err := WorkloadFromGraph(g, o.Namespaces)
	if err != nil {
		return nil, err
	}
	if err := overrideRequests(&w, o.PodCPU, o.PodMemory); err != nil {
		return nil, err
	}
	m, err := catalog.Machine(o.Node)
	if err != nil {
		return nil, err
	}
	fs, err := LoadFootprints(o.FootprintsFile)
	if err != nil {
		return nil, err
	}
	meshes, err := fs.Select(o.Meshes)
	if err != nil {
		return nil, err
	}
	runs := scenarios(w, meshes)
	rows, err := allocateAll(m, runs)
	if err != nil {
		return nil, err
	}
	e := &AllocationEstimate{
		Title: fmt.Sprintf("%s workload x %d namespaces on %s (%s)", w.Name, w.Namespaces, m.Name, m.Provider),
		Rows:  rows,
	}
	if ex != nil {
		e.Title = fmt.Sprintf("example %s: %s", ex.Name, e.Title)
		if studyInputs(o, *ex) {
			for i := range e.Rows {
				e.Rows[i].PublishedIncreasePct = ex.published(e.Rows[i].Mesh)
			}
		} else {
			ex.Notes = append(slices.Clip(ex.Notes), "these inputs differ from the study's, so its figures are not set beside them")
		}
	}
	e.Assumptions, err = assumptions(w, m, catalog.PricesNote, runs, ex)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// studyInputs reports whether the resolved options still describe the
// example's study: only then are the study's figures comparable. Prices
// may differ; they scale every row alike.
func studyInputs(o Options, e Example) bool {
	return o.Workload == e.Workload && o.Namespaces == e.Namespaces && o.Node == e.Node &&
		o.PodCPU == "" && o.PodMemory == "" && o.FootprintsFile == ""
}

func overrideRequests(w *Workload, cpu, memory string) error {
	if cpu == "" && memory == "" {
		return nil
	}
	r, err := ParseResources(cpu, memory)
	if err != nil {
		return fmt.Errorf("pod requests: %w", err)
	}
	for i := range w.Pods {
		if cpu != "" {
			w.Pods[i].Requests.MilliCPU = r.MilliCPU
		}
		if memory != "" {
			w.Pods[i].Requests.Bytes = r.Bytes
		}
	}
	return nil
}
