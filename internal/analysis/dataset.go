package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// DefaultBaseline is the mesh name overheads are measured against.
const DefaultBaseline = "baseline"

// Options tune how a results directory is read.
type Options struct {
	// Baseline is the mesh every other is compared with; default the mesh
	// named DefaultBaseline, else the first whose profile is the baseline
	// profile. A study without one gets no overhead figures.
	Baseline string
	Logger   *slog.Logger
}

// Dataset is a results directory read and grouped for reporting.
type Dataset struct {
	Dir   string
	Index *results.Index
	// Baseline is the baseline mesh's name, or "" when the study has none.
	Baseline string
	Meshes   []string // the baseline first, then in the order they first ran
	Params   []Param
	Configs  []LoadConfig // in ascending order of their parameters
	// Excluded lists every cell left out, in the order the cells ran.
	Excluded []Exclusion
	// Capacity holds a search study's capacities, in the order the study
	// lists its meshes.
	Capacity []*CapacityMesh
	// StudyFile is the study file the results directory keeps, or nil.
	StudyFile []byte
	groups    map[string]*Group
}

// Load reads dir's index and every cell, and groups the cells by mesh and
// load configuration. Unusable cells are kept as exclusions, not errors;
// an unreadable index is an error, and so is a cell file that is not what
// the run wrote (a *results.DamagedError naming each).
func Load(dir string, opts Options) (*Dataset, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ix, err := results.ReadIndex(dir)
	if err != nil {
		return nil, err
	}
	if len(ix.Cells) == 0 && len(ix.Capacity) == 0 {
		return nil, fmt.Errorf("%s: the study has no cells yet", dir)
	}
	if damaged := results.CheckCells(dir, ix); len(damaged) > 0 {
		return nil, &results.DamagedError{Dir: dir, Cells: damaged}
	}
	d := &Dataset{Dir: dir, Index: ix, groups: map[string]*Group{}}
	switch b, err := confined.ReadFile(dir, results.StudyFile, results.MaxStudyBytes); {
	case err == nil:
		d.StudyFile = b
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	appNodes := appNodesOf(ix.Provenance.Cluster)
	values := map[string]map[string]bool{}
	for _, s := range ix.Cells {
		cfg := newConfig(s.Params)
		for k, v := range s.Params {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
		}
		g := d.group(s.Mesh, cfg)
		c, rerr := readCell(dir, s)
		if ex := exclusion(s, c, rerr); ex != nil {
			log.Debug("cell excluded", "cell", s.ID, "reason", ex.Reason)
			if ex.Kind == results.StatusDistorted && c != nil && c.Merged != nil && c.Merged.Latency != nil && c.Merged.Latency.Count() > 0 && c.Merged.End.After(c.Merged.Start) {
				ex.Distorted = newRep(c, appNodes)
			}
			g.Excluded = append(g.Excluded, *ex)
			d.Excluded = append(d.Excluded, *ex)
			continue
		}
		g.add(newRep(c, appNodes), c.Merged.Latency)
	}
	for _, g := range d.groups {
		slices.SortStableFunc(g.Reps, func(a, b *Rep) int { return cmp.Compare(a.Summary.Repetition, b.Summary.Repetition) })
	}
	d.order(values, opts.Baseline)
	d.Capacity = loadCapacities(dir, ix)
	for _, c := range d.Capacity {
		if !slices.Contains(d.Meshes, c.Mesh) {
			d.Meshes = append(d.Meshes, c.Mesh)
		}
	}
	return d, nil
}

// appNodesOf returns the names of the cluster's app nodes, or nil when the
// cluster spec names no node roles.
func appNodesOf(c infra.ClusterSpec) map[string]bool {
	var out map[string]bool
	for _, n := range c.Nodes {
		if n.Role == infra.NodeApp {
			if out == nil {
				out = map[string]bool{}
			}
			out[n.Name] = true
		}
	}
	return out
}

func (d *Dataset) group(mesh string, cfg LoadConfig) *Group {
	k := mesh + "\x00" + cfg.Key
	g, ok := d.groups[k]
	if !ok {
		g = &Group{Mesh: mesh, Config: cfg}
		d.groups[k] = g
	}
	return g
}

func (d *Dataset) order(values map[string]map[string]bool, baseline string) {
	seen := map[string]bool{}
	configs := map[string]LoadConfig{}
	for _, s := range d.Index.Cells {
		if !seen[s.Mesh] {
			seen[s.Mesh] = true
			d.Meshes = append(d.Meshes, s.Mesh)
		}
		c := newConfig(s.Params)
		configs[c.Key] = c
	}
	if baseline == "" {
		baseline = DefaultBaseline
		if !slices.Contains(d.Meshes, baseline) {
			for _, s := range d.Index.Cells {
				if s.Profile == DefaultBaseline {
					baseline = s.Mesh
					break
				}
			}
		}
	}
	if i := slices.Index(d.Meshes, baseline); i >= 0 {
		d.Baseline = baseline
		d.Meshes = append([]string{baseline}, slices.Delete(d.Meshes, i, i+1)...)
	}
	d.Configs = slices.SortedFunc(maps.Values(configs), compareConfigs)
	for _, name := range slices.Sorted(maps.Keys(values)) {
		vs := slices.SortedFunc(maps.Keys(values[name]), compareValues)
		d.Params = append(d.Params, Param{Name: name, Values: vs})
	}
}

// Group returns the mesh's group at a configuration, or nil when that
// combination never ran.
func (d *Dataset) Group(mesh string, c LoadConfig) *Group {
	return d.groups[mesh+"\x00"+c.Key]
}

// ClosedLoopAt reports whether the configuration's cells ran a closed loop
// (Group.ClosedLoop of its first mesh with usable repetitions): there a
// latency added to the baseline's only restates a loss of throughput.
func (d *Dataset) ClosedLoopAt(c LoadConfig) bool {
	for _, m := range d.Meshes {
		if g := d.Group(m, c); g != nil && len(g.Reps) > 0 {
			return g.ClosedLoop()
		}
	}
	return false
}

// Representative is the configuration single-run charts show: the last
// one, with the highest load and most replicas.
func (d *Dataset) Representative() LoadConfig { return d.Configs[len(d.Configs)-1] }

// Sweep returns the parameter swept over at least two numeric values whose
// name satisfies match, or false.
func (d *Dataset) Sweep(match func(name string) bool) (Param, bool) {
	for _, p := range d.Params {
		if len(p.Values) < 2 || !match(p.Name) {
			continue
		}
		if _, ok := newConfig(map[string]string{p.Name: p.Values[0]}).Value(p.Name); ok {
			return p, true
		}
	}
	return Param{}, false
}

// LoadSweep is the swept load parameter (connections or rate), if any.
func (d *Dataset) LoadSweep() (Param, bool) {
	return d.Sweep(func(n string) bool {
		last := n[strings.LastIndex(n, ".")+1:]
		return last == "connections" || last == "rate" || last == "rps" || last == "qps"
	})
}

// ReplicaSweep is the swept replica-count parameter, if any.
func (d *Dataset) ReplicaSweep() (Param, bool) {
	return d.Sweep(func(n string) bool { return strings.HasPrefix(n, "replicas") })
}

// Overhead is the mesh's difference from the baseline at a configuration
// for one metric, paired by round (see Paired); false when there is no
// baseline or either group is missing.
func (d *Dataset) Overhead(mesh string, c LoadConfig, m Metric) (Diff, bool) {
	if d.Baseline == "" || mesh == d.Baseline {
		return Diff{}, false
	}
	b, o := d.Group(d.Baseline, c), d.Group(mesh, c)
	if b == nil || o == nil {
		return Diff{}, false
	}
	return Paired(b.Sample(m), o.Sample(m)), true
}

// Deployments is how many independent deployments the results' cells ran
// in: 1 for results before schema 17.
func (d *Dataset) Deployments() int {
	seen := map[int]bool{}
	for _, s := range d.Index.Cells {
		seen[s.DeploymentOf()] = true
	}
	return max(1, len(seen))
}

// HasPart reports whether any usable repetition of the mesh measured the
// part.
func (d *Dataset) HasPart(mesh string, p Part) bool {
	for _, c := range d.Configs {
		if g := d.Group(mesh, c); g != nil && len(g.Values(CPU(p))) > 0 {
			return true
		}
	}
	return false
}

// Slices returns the configurations with param removed, each once, in
// order: the other parameters a sweep over param is repeated at.
func (d *Dataset) Slices(param string) []LoadConfig {
	var out []LoadConfig
	seen := map[string]bool{}
	for _, c := range d.Configs {
		w := c.Without(param)
		if !seen[w.Key] {
			seen[w.Key] = true
			out = append(out, w)
		}
	}
	return out
}

// Precision is how narrow an overhead's interval is: its half-width
// relative to the overhead itself.
type Precision struct {
	Mesh   string
	Config LoadConfig
	// Relative is the interval's half-width over the overhead's size;
	// +Inf when there is no interval yet or the overhead is zero.
	Relative float64
	// Units is how many units the interval rests on.
	Units int
}

// WidestOverhead is the least precise overhead of metric m over every
// mesh and configuration: the one a planned count of rounds plans for.
// False when there is no baseline or no other mesh.
func (d *Dataset) WidestOverhead(m Metric) (Precision, bool) {
	var worst Precision
	found := false
	for _, c := range d.Configs {
		for _, mesh := range d.Meshes {
			o, ok := d.Overhead(mesh, c, m)
			if !ok {
				continue
			}
			p := Precision{Mesh: mesh, Config: c, Relative: relativeHalfWidth(o.Delta), Units: o.Delta.N}
			if !found || p.Relative > worst.Relative {
				worst, found = p, true
			}
		}
	}
	return worst, found
}

func relativeHalfWidth(e Estimate) float64 {
	if !e.Interval() || e.Median == 0 {
		return math.Inf(1)
	}
	return (e.Hi - e.Lo) / 2 / math.Abs(e.Median)
}
