package history

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
	"github.com/meshbench/meshbench/internal/versions"
)

// Run is one results directory as the history keeps it: what ran, on
// what, and every figure the report computes from it.
type Run struct {
	// ID names the run: the same study run (its study file, start, seed
	// and host) always gets the same ID, wherever its directory is.
	ID string `json:"id"`
	// IndexSHA256 is the hash of study.json as it was added.
	IndexSHA256 string `json:"index_sha256"`
	Study       string `json:"study"`
	StudyHash   string `json:"study_sha256"`
	// ConfigHash hashes the study's definition without its list of meshes,
	// its description, its published figures and its thresholds: two runs
	// with the same hash ran the same workload, load and platform
	// settings, whichever meshes each compared and judged.
	ConfigHash string `json:"config_sha256"`
	// HostClass is what runs must share, beside the study and its
	// configuration, to be compared: the platform, CPU model and count,
	// and cgroup version (the lab), or the cluster (Kubernetes).
	HostClass  string     `json:"host_class"`
	Start      time.Time  `json:"start"`
	End        time.Time  `json:"end"`
	Added      time.Time  `json:"added"`
	Dir        string     `json:"dir"`
	Provenance Provenance `json:"provenance"`
	// Excluded is how many cells the figures leave out (failed,
	// distorted, noisy, unusable), as the report lists them.
	Excluded int      `json:"excluded_cells"`
	Meshes   []Mesh   `json:"meshes"`
	Figures  []Figure `json:"figures"`
}

// Provenance is what the run recorded about how it was made.
type Provenance struct {
	MeshbenchVersion string     `json:"meshbench_version"`
	MeshbenchCommit  string     `json:"meshbench_commit,omitempty"`
	GoVersion        string     `json:"go_version"`
	Platform         infra.Info `json:"platform"`
	Noise            Noise      `json:"noise"`
}

// Noise is the run's host-noise record: the guard it applied and what its
// cells measured.
type Noise struct {
	// ThresholdCores and Retries are the guard (results.NoiseGuard); zero
	// when the platform measures no host noise.
	ThresholdCores float64 `json:"threshold_cores,omitempty"`
	Retries        int     `json:"retries,omitempty"`
	// Measured is how many cells measured host noise; MedianCores and
	// MaxCores are their median and highest, in cores; Noisy counts the
	// cells the guard found noisy.
	Measured    int     `json:"measured"`
	MedianCores float64 `json:"median_cores"`
	MaxCores    float64 `json:"max_cores"`
	Noisy       int     `json:"noisy"`
}

// FactInjectedWork is the fact that records a mesh's injected_work (the
// lab's real regression, a Lua loop in every sidecar): like the proxy
// release it is not part of the series' Spec, so that a series carries
// the step it makes, and what changed names it.
const FactInjectedWork = "injected_work"

// Mesh is one of the run's meshes and what it ran.
type Mesh struct {
	Name    string `json:"name"`
	Profile string `json:"profile"`
	// Spec is the mesh's settings without its proxy release and its
	// injected work (kept in Facts), as canonical JSON: meshes with the
	// same Spec are the same mesh under different releases, and form one
	// series.
	Spec string `json:"spec"`
	// Release is the proxy release its cells' verification recorded
	// (several joined by " + " when a mesh's cells ran more than one),
	// else its proxy_version; Build is the proxy's build as Envoy reports
	// it (commit/version/status/type/TLS library), where recorded; Istiod
	// is istiod's version under control_plane istiod.
	Release string `json:"release,omitempty"`
	Build   string `json:"build,omitempty"`
	Istiod  string `json:"istiod,omitempty"`
	// ConfigHash is the hash of the configuration its proxies ran.
	ConfigHash string `json:"config_hash,omitempty"`
	// Facts are the other facts its verification recorded (charts,
	// images, the cluster's version), each bounded in length.
	Facts map[string]string `json:"facts,omitempty"`
}

// Figure is one figure of one mesh at one load configuration: the
// median over the usable repetitions with its interval, as the report
// shows it.
type Figure struct {
	Mesh   string            `json:"mesh"`
	Config string            `json:"config"` // analysis.LoadConfig's key
	Params map[string]string `json:"params,omitempty"`
	Metric string            `json:"metric"`
	Median float64           `json:"median"`
	Lo     float64           `json:"lo"`
	Hi     float64           `json:"hi"`
	// N is the number of repetitions (for an added figure, the fewer of
	// the two sides'); Level is the interval's confidence level, 0 when
	// the figure has none (too few repetitions).
	N     int     `json:"n"`
	Level float64 `json:"level"`
}

// Figures a run gets beside the metrics analysis measures per repetition.
const (
	// CapacityMetric is a search study's capacity at its SLO, in req/s,
	// with the search's interval; its Config is empty.
	CapacityMetric = "capacity_rps"
	// Level95 is the level of a capacity's interval in results older
	// than schema 17, which did not record it; every other figure carries
	// the level its design reached.
	Level95 = 0.95
)

// AddedMetric is the metric name of what a mesh adds to the baseline's figure,
// as published figures name it ("added:p50").
func AddedMetric(m analysis.Metric) string { return results.RelationAdded + ":" + string(m) }

// Bounds on what a run may hold. A results directory is untrusted input:
// one meshbench wrote stays far inside them.
const (
	maxNameBytes  = 256    // a mesh, profile, study or parameter name or value
	maxFigures    = 200000 // figures in one run
	maxFacts      = 64     // facts kept per mesh
	maxFactBytes  = 512    // a fact's value, cut beyond
	maxStudyBytes = 1 << 20
)

// ErrIncomplete refuses a run that has not finished.
var ErrIncomplete = errors.New("the run is not complete")

// Read reads a results directory into a Run, computing every figure with
// the report's own functions (package analysis). It refuses a run that is
// not complete, one whose cell files are not what the run wrote (the
// integrity check), and one whose kept study file is not the one it ran.
func Read(dir string) (*Run, error) {
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		return nil, err
	}
	return FromDataset(d)
}

// FromDataset makes a Run of a loaded results directory.
func FromDataset(d *analysis.Dataset) (*Run, error) {
	ix := d.Index
	if !ix.Complete {
		return nil, fmt.Errorf("%s: %w (interrupted): finish it with meshbench run --resume %s, then add it", d.Dir, ErrIncomplete, d.Dir)
	}
	if err := checkName("study", ix.Study); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Dir, err)
	}
	configHash, err := configHash(d)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(d.Dir)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(ix)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	pv := ix.Provenance
	r := &Run{
		ID: runID(ix), IndexSHA256: hex.EncodeToString(sum[:]), Study: ix.Study, StudyHash: ix.StudyHash, ConfigHash: configHash,
		HostClass: HostClass(pv.Platform), Start: ix.Start.UTC(), End: ix.End.UTC(), Dir: abs, Excluded: len(d.Excluded),
		Provenance: Provenance{
			MeshbenchVersion: pv.MeshbenchVersion, MeshbenchCommit: pv.MeshbenchCommit, GoVersion: pv.GoVersion,
			Platform: pv.Platform, Noise: noiseOf(ix),
		},
	}
	for _, name := range d.Meshes {
		m, err := meshOf(d, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Dir, err)
		}
		r.Meshes = append(r.Meshes, m)
	}
	if err := r.addFigures(d); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Dir, err)
	}
	return r, nil
}

// runID names a run by what makes it that run and no other.
func runID(ix *results.Index) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d\n%s\n%s\n", ix.StudyHash, ix.Start.UTC().Format(time.RFC3339Nano), ix.Seed, ix.Provenance.Platform.Host, ix.Provenance.Platform.Context)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// HostClass names the hosts whose runs may be compared.
func HostClass(p infra.Info) string {
	if p.Name == "kubernetes" {
		return fmt.Sprintf("kubernetes, context %s (%s)", cmp.Or(p.Context, "default"), cmp.Or(p.Host, "unknown API server"))
	}
	return fmt.Sprintf("%s, %s ×%d, cgroup v%d", cmp.Or(p.Name, "unknown platform"), cmp.Or(p.CPUModel, "unknown CPU"), p.CPUs, p.CgroupVersion)
}

// configHash hashes the study file kept with the results without the
// parts that do not change what a mesh's figures mean, so that a study
// run with a different set of meshes (a bisection's releases), or other
// thresholds, stays in the same series. The file must be the one the run recorded.
func configHash(d *analysis.Dataset) (string, error) {
	if d.StudyFile == nil {
		return d.Index.StudyHash, nil
	}
	if len(d.StudyFile) > maxStudyBytes {
		return "", fmt.Errorf("%s: %s is %d bytes, more than a study file meshbench reads (%d)", d.Dir, results.StudyFile, len(d.StudyFile), maxStudyBytes)
	}
	if sum := sha256.Sum256(d.StudyFile); hex.EncodeToString(sum[:]) != d.Index.StudyHash {
		return "", fmt.Errorf("%s: %s does not match the hash %s recorded: it was edited after the run, so what the run measured is unknown", d.Dir, results.StudyFile, results.IndexFile)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(d.StudyFile, &doc); err != nil {
		return "", fmt.Errorf("%s: %s: %w", d.Dir, results.StudyFile, err)
	}
	for _, k := range []string{"meshes", "description", "published", "thresholds"} {
		delete(doc, k)
	}
	b, err := json.Marshal(doc) // map keys marshal sorted
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", d.Dir, results.StudyFile, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16], nil
}

func noiseOf(ix *results.Index) Noise {
	var n Noise
	if g := ix.Noise; g != nil {
		n.ThresholdCores, n.Retries = g.Threshold, g.Retries
	}
	var cores []float64
	for _, c := range ix.Cells {
		if c.HostNoise != nil {
			cores = append(cores, *c.HostNoise)
		}
		if c.Noisy {
			n.Noisy++
		}
	}
	if n.Measured = len(cores); n.Measured > 0 {
		n.MedianCores = analysis.Median(cores)
		n.MaxCores = slices.Max(cores)
	}
	return n
}

// meshOf records a mesh: its settings from its cells, its release and
// facts from their verification.
func meshOf(d *analysis.Dataset, name string) (Mesh, error) {
	if err := checkName("mesh", name); err != nil {
		return Mesh{}, err
	}
	m := Mesh{Name: name}
	var spec *mesh.MeshSpec
	releases := map[string]bool{}
	facts := map[string]string{}
	for _, cfg := range d.Configs {
		g := d.Group(name, cfg)
		if g == nil {
			continue
		}
		for _, r := range g.Reps {
			if spec == nil {
				s := r.MeshSpec
				spec = &s
			}
			releases[cmp.Or(mesh.EnvoyVersion(r.Summary.Verification), r.MeshSpec.ProxyVersion)] = true
			for _, c := range r.Summary.Verification {
				if c.ConfigHash != "" {
					m.ConfigHash = c.ConfigHash
				}
				for k, v := range c.Facts {
					facts[k] = v
				}
			}
		}
	}
	for _, c := range d.Capacity {
		if c.Mesh == name {
			m.Profile = c.Profile
		}
	}
	if spec != nil {
		m.Profile = spec.Profile
		s := *spec
		// The proxy release and meshbench's injected work are what a
		// series varies: a mesh under another release, or with the
		// regression injected from one release on, is the same mesh,
		// and what changed between points names them.
		s.ProxyVersion = ""
		if s.InjectedWork != 0 {
			facts[FactInjectedWork] = fmt.Sprintf("%d Lua iterations a request", s.InjectedWork)
			s.InjectedWork = 0
		}
		b, err := json.Marshal(s)
		if err != nil {
			return Mesh{}, err
		}
		m.Spec = string(b)
	} else {
		// A mesh with capacity trials only: its profile is its setting.
		b, _ := json.Marshal(mesh.MeshSpec{Profile: m.Profile})
		m.Spec = string(b)
	}
	if err := checkName("profile", m.Profile); err != nil {
		return Mesh{}, err
	}
	delete(releases, "")
	m.Release = strings.Join(slices.SortedFunc(maps.Keys(releases), versions.CompareReleases), " + ")
	m.Build, m.Istiod = facts[mesh.FactEnvoyBuild], facts[mesh.FactIstiodVersion]
	for _, k := range []string{mesh.FactEnvoyVersion, mesh.FactEnvoyBuild, mesh.FactIstiodVersion} {
		delete(facts, k)
	}
	for _, k := range slices.Sorted(maps.Keys(facts)) {
		// The values as installed are kept by their hash (values-sha256/).
		if strings.HasPrefix(k, "values/") || len(k) > maxNameBytes || len(m.Facts) >= maxFacts {
			continue
		}
		if m.Facts == nil {
			m.Facts = map[string]string{}
		}
		m.Facts[k] = cut(facts[k], maxFactBytes)
	}
	return m, nil
}

// addFigures records every figure of every mesh at every configuration:
// each metric its repetitions measured (a percentile only where the
// pooled sample holds it), what a mesh adds to the baseline's latency in
// an open loop, and a search's capacity. A closed loop records no added
// latency: its latency is its connections over its throughput (Little's
// law), so a series of it would be the throughput's (qps, recorded)
// under another name.
func (r *Run) addFigures(d *analysis.Dataset) error {
	for _, name := range d.Meshes {
		for _, cfg := range d.Configs {
			g := d.Group(name, cfg)
			if g == nil {
				continue
			}
			closed := d.ClosedLoopAt(cfg)
			if err := checkParams(cfg.Params); err != nil {
				return err
			}
			seen := map[analysis.Metric]bool{}
			for _, rep := range g.Reps {
				for m := range rep.Values {
					seen[m] = true
				}
			}
			for _, m := range slices.Sorted(maps.Keys(seen)) {
				if e := g.Estimate(m); e.Valid() {
					r.add(name, cfg, string(m), e, e.Level)
				}
				if closed || !m.IsLatency() {
					continue
				}
				if o, ok := d.Overhead(name, cfg, m); ok && o.Delta.Valid() {
					r.add(name, cfg, AddedMetric(m), o.Delta, o.Delta.Level)
				}
			}
		}
	}
	for _, c := range d.Capacity {
		// A bound is not a capacity's estimate: a series of them would
		// show a step wherever a search was cut short.
		form := c.Form()
		if c.Status != results.StatusOK || form != search.FormInterval && form != search.FormPoint {
			continue
		}
		e := analysis.Estimate{Median: c.RPS, Lo: c.RPS, Hi: c.RPS, N: len(c.Trials)}
		level := 0.0
		if form == search.FormInterval {
			e.Lo, e.Hi, level = c.CILow, c.CIHigh, c.Level
			if level == 0 { // before schema 17
				level = Level95
			}
		}
		r.add(c.Mesh, analysis.LoadConfig{}, CapacityMetric, e, level)
	}
	if len(r.Figures) > maxFigures {
		return fmt.Errorf("%d figures, more than the %d a run's history holds", len(r.Figures), maxFigures)
	}
	return nil
}

func (r *Run) add(mesh string, cfg analysis.LoadConfig, metric string, e analysis.Estimate, level float64) {
	if !finite(e.Median) {
		return
	}
	lo, hi := e.Lo, e.Hi
	if level == 0 || !finite(lo) || !finite(hi) {
		lo, hi, level = e.Median, e.Median, 0
	}
	r.Figures = append(r.Figures, Figure{Mesh: mesh, Config: cfg.Key, Params: cfg.Params, Metric: metric,
		Median: e.Median, Lo: lo, Hi: hi, N: e.N, Level: level})
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func checkName(what, s string) error {
	if len(s) > maxNameBytes {
		return fmt.Errorf("a %s name of %d bytes, more than %d: not results meshbench wrote", what, len(s), maxNameBytes)
	}
	return nil
}

func checkParams(p map[string]string) error {
	if len(p) > maxFacts {
		return fmt.Errorf("a cell with %d parameters, more than %d: not results meshbench wrote", len(p), maxFacts)
	}
	for k, v := range p {
		if err := checkName("parameter", k); err != nil {
			return err
		}
		if err := checkName("parameter "+strconv.Quote(cut(k, 40))+"'s value", v); err != nil {
			return err
		}
	}
	return nil
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
