package cost

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
)

// ResultsEstimate prices a study's results at one load configuration: the
// data plane's measured consumption, and the recorded requests packed onto
// nodes.
type ResultsEstimate struct {
	Study string `json:"study"`
	Dir   string `json:"dir"`
	// Config is the load configuration priced: the last in sweep order
	// (highest load, most replicas), as the report's cost section.
	Config      map[string]string `json:"config"`
	ConfigLabel string            `json:"-"`
	Meshes      []MeshCells       `json:"meshes"`
	// Skipped are the configuration's cells left out (failed, distorted or
	// unusable); StudySkipped counts them over the whole study.
	Skipped      []SkippedCell        `json:"skipped"`
	StudyCells   int                  `json:"study_cells"`
	StudySkipped int                  `json:"study_skipped"`
	Consumption  *ConsumptionEstimate `json:"consumption"`
	// Allocation is nil when the results hold no application pods.
	Allocation *AllocationEstimate `json:"allocation,omitempty"`
}

// MeshCells is how many of a mesh's cells were priced, and the median over
// them of the completed requests a second.
type MeshCells struct {
	Mesh        string  `json:"mesh"`
	Usable      int     `json:"usable_cells"`
	Skipped     int     `json:"skipped_cells"`
	RequestRate float64 `json:"request_rate_rps"`
}

// SkippedCell is a cell left out, and why.
type SkippedCell struct {
	ID     string `json:"id"`
	Mesh   string `json:"mesh"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// EstimateResults reads the results directory and prices it.
func EstimateResults(o Options, catalog *Catalog) (*ResultsEstimate, error) {
	if err := resultsOnly(o); err != nil {
		return nil, err
	}
	d, err := analysis.Load(o.ResultsDir, analysis.Options{})
	if err != nil {
		return nil, fmt.Errorf("--results: %w", err)
	}
	prices, err := unitPrices(o, catalog)
	if err != nil {
		return nil, err
	}
	m, err := catalog.Machine(cmp.Or(o.Node, DefaultNode))
	if err != nil {
		return nil, err
	}
	if len(d.Configs) == 0 {
		return nil, fmt.Errorf("--results %s: a capacity search has no cells at a fixed load to price; its dollars per million requests at the SLO are in its report (meshbench report %s)", o.ResultsDir, o.ResultsDir)
	}
	cfg := d.Representative()
	e := &ResultsEstimate{
		Study: d.Index.Study, Dir: o.ResultsDir, Config: cfg.Params, ConfigLabel: cfg.Label(),
		StudyCells: len(d.Index.Cells), StudySkipped: len(d.Excluded),
		Consumption: &ConsumptionEstimate{Prices: prices},
	}
	// The cells give the memory a projection scales by nodes; the CPU at
	// another rate is the capacity search's fit, read below.
	var byNodes *Projection
	if o.ProjectRPS > 0 || o.ProjectNodes > 0 {
		e.Consumption.Projection = &Projection{RequestRate: o.ProjectRPS, Nodes: o.ProjectNodes}
		byNodes = &Projection{Nodes: o.ProjectNodes}
	}
	var noFit, beyond []string
	for _, mesh := range d.Meshes {
		g := d.Group(mesh, cfg)
		if g == nil {
			continue
		}
		mc := MeshCells{Mesh: mesh, Usable: len(g.Reps), Skipped: len(g.Excluded)}
		for _, x := range g.Excluded {
			e.Skipped = append(e.Skipped, SkippedCell{ID: x.Summary.ID, Mesh: mesh, Kind: x.Kind, Reason: x.Reason})
		}
		if len(g.Reps) > 0 {
			rows, err := GroupConsumption(g, prices, byNodes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.ResultsDir, err)
			}
			mc.RequestRate = analysis.Median(g.Values(analysis.QPS))
			row := meanRow(rows)
			if o.ProjectRPS > 0 {
				switch f := dataPlaneFit(d.Capacity, mesh); {
				case f != nil && o.ProjectRPS > f.CapacityRPS && !o.Extrapolate:
					beyond = append(beyond, fmt.Sprintf("%s (%.0f req/s)", mesh, f.CapacityRPS))
				case f != nil:
					f.Extrapolated = o.ProjectRPS > f.CapacityRPS
					row.ProjectedFrom = f
					*row.Projected = prices.price(f.At(o.ProjectRPS), row.Projected.MemoryGB)
				case row.CPUCores > 0:
					noFit = append(noFit, mesh)
				default:
					// No data plane: nothing to project.
					*row.Projected = prices.price(0, row.Projected.MemoryGB)
				}
			}
			e.Consumption.Rows = append(e.Consumption.Rows, row)
		}
		e.Meshes = append(e.Meshes, mc)
	}
	if len(noFit) > 0 {
		return nil, fmt.Errorf("--rps: %s: these results hold no split of the data plane's CPU into idle and per-request parts (the fit of a capacity search's trials, which --study quick and --study capacity run), "+
			"and the whole CPU, idle included, scaled with the rate would overstate it: drop --rps, or price results with a capacity search", strings.Join(noFit, ", "))
	}
	if len(beyond) > 0 {
		return nil, fmt.Errorf("--rps %g is beyond the measured capacity of %s on this host: the fitted CPU is not measured there, and a cluster's capacity is not this host's; give --extrapolate to project the fit anyway",
			o.ProjectRPS, strings.Join(beyond, ", "))
	}
	if len(e.Consumption.Rows) == 0 {
		return nil, fmt.Errorf("%s: no usable cell at %s: all %d were skipped (failed, distorted or unusable)", o.ResultsDir, cfg.Label(), len(e.Skipped))
	}
	if e.Allocation, err = RecordedAllocation(d, cfg, m, catalog.PricesNote); err != nil {
		return nil, fmt.Errorf("%s: %w", o.ResultsDir, err)
	}
	return e, nil
}

// dataPlaneFit is a mesh's data-plane CPU as its capacity search fitted
// it (every data-plane role's idle cores and cores per request a second,
// summed), or nil when the results hold no such fit.
func dataPlaneFit(caps []*analysis.CapacityMesh, mesh string) *CPUFit {
	for _, c := range caps {
		if c.Mesh != mesh || c.Status != results.StatusOK || c.RPS <= 0 {
			continue
		}
		var f *CPUFit
		for _, rf := range c.Fits {
			if !rf.Role.DataPlane() {
				continue
			}
			if f == nil {
				f = &CPUFit{CapacityRPS: c.RPS, Trials: rf.N, R2: rf.R2}
			}
			f.IdleCores += rf.Idle
			f.CoresPerRPS += rf.PerRPS
			f.R2 = min(f.R2, rf.R2)
		}
		return f
	}
	return nil
}

// resultsOnly refuses the options that describe a scenario of their own,
// which a results directory already records.
func resultsOnly(o Options) error {
	if o.Extrapolate && o.ProjectRPS <= 0 {
		return fmt.Errorf("--extrapolate projects --rps beyond the measured capacity; give --rps too")
	}
	for _, f := range []struct {
		flag string
		set  bool
	}{
		{"--example", o.Example != ""}, {"--workload", o.Workload != ""}, {"--namespaces", o.Namespaces != 0},
		{"--pod-cpu", o.PodCPU != ""}, {"--pod-mem", o.PodMemory != ""}, {"--mesh", len(o.Meshes) > 0},
		{"--footprints", o.FootprintsFile != ""}, {"--usage", o.UsageFile != ""},
	} {
		if f.set {
			return fmt.Errorf("--results prices what the study recorded; drop %s", f.flag)
		}
	}
	return nil
}

// Write writes the estimate as text: the cells priced, the consumption
// table and the allocation with its assumptions; or, when format is
// "json", as one object.
func (e *ResultsEstimate) Write(w io.Writer, format string) error {
	if format == "json" {
		return writeJSON(w, e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Study %s (%s) at %s: the last configuration in sweep order\n\n", e.Study, e.Dir, e.ConfigLabel)
	cells := [][]string{{"MESH", "USABLE CELLS", "SKIPPED", "MEDIAN RPS"}}
	for _, m := range e.Meshes {
		cells = append(cells, []string{m.Mesh, strconv.Itoa(m.Usable), strconv.Itoa(m.Skipped), fmt.Sprintf("%.1f", m.RequestRate)})
	}
	table(&b, cells)
	for _, s := range e.Skipped {
		fmt.Fprintf(&b, "skipped %s (%s): %s: %s\n", s.ID, s.Mesh, s.Kind, s.Reason)
	}
	fmt.Fprintf(&b, "Study-wide, %d of %d cells are skipped (failed, distorted or unusable); other configurations are not priced.\n\n",
		e.StudySkipped, e.StudyCells)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := e.Consumption.Write(w, "text"); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "Per mesh, each figure is the mean over its usable cells of that cell's (a bill is paid on mean use): the data plane's mean usage over the measured window, its price, and its CPU over the completed requests a second.\n\n"); err != nil {
		return err
	}
	if e.Allocation == nil {
		_, err := io.WriteString(w, "Not priced by requests: the results hold no application pods.\n")
		return err
	}
	return e.Allocation.Write(w, "text")
}
