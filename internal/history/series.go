package history

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/versions"
)

// Key is what a series' points share: only comparable figures form a
// series, those of the same study and configuration, on the same class
// of host, of one mesh (its settings but its proxy release), at one load
// configuration, for one metric.
type Key struct {
	Study      string `json:"study"`
	ConfigHash string `json:"config_sha256"`
	HostClass  string `json:"host_class"`
	Spec       string `json:"spec"`
	Config     string `json:"config"`
	Metric     string `json:"metric"`
}

// ID is the key as one string, for a URL or a seed.
func (k Key) ID() string {
	b, _ := json.Marshal(k)
	return string(b)
}

// Series is one key's points in order: by proxy release, then by the
// run's start, then by mesh name. A series over releases (one study
// measuring each release, or a bisection adding releases in between)
// reads in release order, and one over runs of one release in time order.
type Series struct {
	Key
	Profile string
	Params  map[string]string
	Points  []Point
}

// Point is one figure of the series with the run and mesh it comes from.
type Point struct {
	Run    *Run
	Mesh   *Mesh
	Figure Figure
}

// Value is the figure the series is made of: the median over the
// repetitions.
func (p Point) Value() float64 { return p.Figure.Median }

// PointLabel names point i as a chart's axis and a change point do: by
// its release where the series' points differ in release, else by its
// run's start.
func (s *Series) PointLabel(i int) string {
	p := s.Points[i]
	for _, q := range s.Points {
		if q.Mesh.Release != p.Mesh.Release {
			return p.Mesh.Release
		}
	}
	return p.Run.Start.Format("2006-01-02 15:04")
}

// Metric is the series' metric as analysis names it.
func (s *Series) Metric() analysis.Metric { return analysis.Metric(s.Key.Metric) }

// MeshLabel names the series' mesh by its profile and the settings it
// sets.
func (s *Series) MeshLabel() string {
	var set map[string]any // the settings the spec sets: its JSON omits the rest
	_ = json.Unmarshal([]byte(s.Spec), &set)
	parts := []string{cmp.Or(s.Profile, "unknown profile")}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if k != "profile" {
			parts = append(parts, fmt.Sprintf("%s %v", strings.ReplaceAll(k, "_", " "), set[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// MetricLabel names the series' metric as tables do.
func (s *Series) MetricLabel() string {
	if base, ok := strings.CutPrefix(s.Key.Metric, "added:"); ok {
		return "added " + analysis.Metric(base).Label()
	}
	if s.Key.Metric == CapacityMetric {
		return "capacity at the SLO (req/s)"
	}
	return s.Metric().Label()
}

// Title names the series in full.
func (s *Series) Title() string {
	cfg := "the study's only load configuration"
	if s.Config != "" {
		cfg = strings.ReplaceAll(s.Config, ",", ", ")
	}
	return fmt.Sprintf("%s: %s, %s at %s (%s)", s.Study, s.MeshLabel(), s.MetricLabel(), cfg, s.HostClass)
}

// Build makes every series of the runs' figures, in the order their
// first figures appear.
func Build(runs []*Run) []*Series {
	var out []*Series
	byKey := map[Key]*Series{}
	for _, r := range runs {
		meshes := map[string]*Mesh{}
		for i := range r.Meshes {
			meshes[r.Meshes[i].Name] = &r.Meshes[i]
		}
		for _, f := range r.Figures {
			m := meshes[f.Mesh]
			if m == nil {
				continue
			}
			k := Key{Study: r.Study, ConfigHash: r.ConfigHash, HostClass: r.HostClass, Spec: m.Spec, Config: f.Config, Metric: f.Metric}
			s := byKey[k]
			if s == nil {
				s = &Series{Key: k, Profile: m.Profile, Params: f.Params}
				byKey[k] = s
				out = append(out, s)
			}
			s.Points = append(s.Points, Point{Run: r, Mesh: m, Figure: f})
		}
	}
	for _, s := range out {
		slices.SortStableFunc(s.Points, comparePoints)
	}
	return out
}

func comparePoints(a, b Point) int {
	return cmp.Or(
		versions.CompareReleases(a.Mesh.Release, b.Mesh.Release),
		a.Run.Start.Compare(b.Run.Start),
		strings.Compare(a.Mesh.Name, b.Mesh.Name),
	)
}
