package study

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/platform"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
	"github.com/meshbench/meshbench/internal/topology"
)

// Cell is one measurement: a mesh under one combination of sweep values,
// in one repetition.
type Cell struct {
	// ID names the cell by its content, so that a resumed run recognizes
	// the cells already done whatever order it plans.
	ID         string `json:"id"`
	Mesh       Mesh   `json:"mesh"`
	Repetition int    `json:"repetition"`
	// Deployment is the independent deployment the cell's round runs in.
	Deployment int `json:"deployment"`
	// Params holds the cell's sweep values as the study wrote them (before
	// scaling), by parameter name.
	Params map[string]string `json:"params,omitempty"`
	// Group numbers the workload shapes from 1: consecutive cells of one
	// group share one deployment.
	Group      int            `json:"group"`
	Namespaces int            `json:"namespaces"`
	Replicas   map[string]int `json:"replicas,omitempty"`
	// Payload, Protocol and Fanout are the graph variant a payload,
	// protocol or fan-out sweep deploys; zero for the study's graph as
	// written.
	Payload  int               `json:"payload,omitempty"`
	Protocol topology.Protocol `json:"protocol,omitempty"`
	Fanout   int               `json:"fanout,omitempty"`
	// Pods is how many application pods the cell's workload runs, in all
	// namespaces.
	Pods int `json:"pods"`
	// Load is what the platform runs, after scaling.
	Load infra.LoadSpec `json:"load"`
	// Estimate is the cell's expected time, set-up included.
	Estimate time.Duration `json:"estimate_ns"`
}

// Plan is the cells of a study in the order they run.
type Plan struct {
	Study       string `json:"study"`
	StudySHA256 string `json:"study_sha256"`
	Platform    string `json:"platform"`
	Seed        uint64 `json:"seed"`
	Shuffle     bool   `json:"shuffle"`
	Repetitions int    `json:"repetitions"`
	// MaxRepetitions and CI are a planned count's limits: the pilot of
	// Repetitions rounds plans the total, at most MaxRepetitions, for every
	// p50 overhead's interval to be within CI of it. Equal to Repetitions
	// for a fixed count.
	MaxRepetitions int `json:"max_repetitions"`
	// Deployments is how many independent deployments the rounds span.
	Deployments int             `json:"deployments"`
	CI          float64         `json:"ci,omitempty"`
	Meshes      []string        `json:"meshes"`
	Scaling     results.Scaling `json:"scaling"`
	Groups      int             `json:"workload_groups"`
	Cells       []Cell          `json:"cells"`
	Estimate    time.Duration   `json:"estimate_ns"`
	// Notes say where the platform changed the study, such as a measured
	// phase lengthened to fit its metrics.
	Notes []string `json:"notes,omitempty"`
	// Search is a search study's settings; it plans no cells, for its
	// trials are decided as it runs.
	Search *search.Config `json:"search,omitempty"`
	// SearchOver is what the search varies: empty for the rate,
	// "connections" for the connections held open.
	SearchOver string `json:"search_over,omitempty"`
	// SearchStartFraction, when set, starts each mesh's search at that
	// fraction of its calibrated capacity (search.start_fraction).
	SearchStartFraction float64 `json:"search_start_fraction,omitempty"`
}

// point is one combination of sweep values before meshes and repetitions.
type point struct {
	params  map[string]string
	names   []string // params' names in sweep order, for the cell ID
	setting setting
	note    string // why the platform changed the point, for the plan
}

// NewPlan orders the study's cells. The rounds are split over the
// study's deployments, in order; within a deployment cells are grouped by
// workload shape (namespaces and replicas), so that the workload is
// deployed once per group; within a group every round of the deployment
// runs every load point, and every load point runs each mesh once, in an
// order shuffled per round with the study's seed. Meshes thus interleave
// (A B C C A B ...) rather than run in blocks, and machine drift spreads
// over all of them. sc scales each cell's load; a calibrated scaling whose
// factor is not yet measured plans the load unscaled.
func NewPlan(s *Study, sc results.Scaling) (*Plan, error) {
	return newPlan(s, sc, s.Repetitions.Min)
}

// newPlan plans the given number of rounds; an adaptive run plans more
// rounds than its minimum as it goes, and the rounds already planned keep
// their cell IDs.
func newPlan(s *Study, sc results.Scaling, rounds int) (*Plan, error) {
	axes, err := s.axes()
	if err != nil {
		return nil, err
	}
	points, err := s.points(axes)
	if err != nil {
		return nil, err
	}
	if sc.Mode == results.ScaleTenants {
		var expanded []point
		for _, pt := range points {
			for _, k := range sc.Tenants {
				expanded = append(expanded, s.withTenants(pt, k))
			}
		}
		points = expanded
	}
	p := &Plan{
		Study: s.Name, StudySHA256: s.SHA256, Platform: s.Platform.Type, Seed: s.Order.Seed,
		Shuffle: *s.Order.Shuffle, Repetitions: rounds, MaxRepetitions: max(rounds, s.Repetitions.Max), CI: s.Repetitions.CI, Scaling: sc,
		Deployments: s.DeploymentOf(rounds),
	}
	for _, m := range s.Meshes {
		p.Meshes = append(p.Meshes, m.Name)
	}
	if s.Search != nil {
		cfg := s.Search.Config()
		p.Search, p.Estimate = &cfg, s.searchEstimate(cfg)
		p.SearchOver, p.SearchStartFraction = s.Search.Over, s.Search.StartFraction
		if !s.HasCells() {
			return p, nil
		}
	}
	var groups [][]point
	byKey := map[string]int{}
	for _, pt := range points {
		k := pt.setting.workloadKey()
		i, ok := byKey[k]
		if !ok {
			i = len(groups)
			byKey[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], pt)
	}
	p.Groups = len(groups)
	for _, pt := range points {
		if pt.note != "" && !slices.Contains(p.Notes, pt.note) {
			p.Notes = append(p.Notes, pt.note)
		}
	}
	rng := rand.New(rand.NewPCG(s.Order.Seed, 0))
	order := make([]int, len(s.Meshes))
	for dep := 1; dep <= p.Deployments; dep++ {
		for gi, g := range groups {
			for rep := 1; rep <= rounds; rep++ {
				if s.DeploymentOf(rep) != dep {
					continue
				}
				for _, pt := range g {
					for i := range order {
						order[i] = i
					}
					if p.Shuffle {
						rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
					}
					for _, mi := range order {
						c := s.cell(s.Meshes[mi], rep, gi+1, pt, sc)
						c.Deployment = dep
						p.Cells = append(p.Cells, c)
					}
				}
			}
		}
	}
	p.estimate(s)
	if p.Search != nil {
		p.Estimate += s.searchEstimate(*p.Search)
	}
	return p, nil
}

// points is the cross product of the sweeps, the first sweep outermost.
func (s *Study) points(axes []axis) ([]point, error) {
	pts := []point{{params: map[string]string{}, setting: s.baseSetting()}}
	for _, a := range axes {
		var next []point
		for _, pt := range pts {
			for _, row := range a.rows {
				np := point{params: maps.Clone(pt.params), names: slices.Clone(pt.names), setting: pt.setting.clone()}
				for j, prm := range a.params {
					v, err := prm.set(&np.setting, row[j])
					if err != nil {
						return nil, err // decodeAxis checked every value
					}
					np.params[a.names[j]] = v
					np.names = append(np.names, a.names[j])
				}
				next = append(next, np)
			}
		}
		pts = next
	}
	for i := range pts {
		if err := pts[i].setting.Load.validate("load (with sweep values " + pts[i].label() + ")"); err != nil {
			return nil, err
		}
		if err := s.checkPods(pts[i].setting); err != nil {
			return nil, fieldError("sweeps", "with sweep values %s: %v", pts[i].label(), err)
		}
		pts[i].note = s.fitPhase(&pts[i].setting.Load)
	}
	return pts, nil
}

// fitPhase lengthens a measured phase too short for the platform's
// resource metrics: on Kubernetes, CPU and memory are sampled every
// platform.kubernetes.sample_interval (infra.KubernetesSampleInterval
// by default), and a phase needs at least infra.MinSamplesPerPhase
// samples to have any. It says what it did.
func (s *Study) fitPhase(l *Load) string {
	if s.Platform.Type != PlatformKubernetes || l.Duration <= 0 {
		return ""
	}
	every := infra.KubernetesSampleInterval
	if k := s.Platform.Kubernetes; k != nil && k.SampleInterval > 0 {
		every = k.SampleInterval.D()
	}
	least := topology.Duration(infra.MinSamplesPerPhase * every)
	if l.Duration >= least {
		return ""
	}
	note := fmt.Sprintf("measured phases of %s lengthened to %s: on Kubernetes CPU and memory are sampled every %s (platform.kubernetes.sample_interval), and a phase needs %d samples",
		l.Duration, least, every, infra.MinSamplesPerPhase)
	l.Duration = least
	return note
}

func (pt point) label() string {
	var parts []string
	for _, n := range pt.names {
		parts = append(parts, n+"="+pt.params[n])
	}
	return strings.Join(parts, " ")
}

func (s *Study) baseSetting() setting {
	return setting{Namespaces: s.Workload.Namespaces, Replicas: maps.Clone(s.Workload.Replicas), Load: s.Load}
}

// workloadKey identifies a workload shape: cells with equal keys share a
// deployment.
func (st setting) workloadKey() string {
	var b strings.Builder
	b.WriteString("namespaces=" + strconv.Itoa(st.Namespaces))
	for _, svc := range slices.Sorted(maps.Keys(st.Replicas)) {
		fmt.Fprintf(&b, ",%s%s=%d", replicasPrefix, svc, st.Replicas[svc])
	}
	b.WriteString(st.graphKey())
	return b.String()
}

// generators is how many load generators a setting runs.
func (st setting) generators() int {
	if st.Load.Generators == GeneratorsPerNamespace && st.Tenants > 0 {
		return st.Tenants
	}
	if st.Load.Generators == GeneratorsPerNamespace {
		return st.Namespaces
	}
	return 1
}

func (s *Study) cell(m Mesh, rep, group int, pt point, sc results.Scaling) Cell {
	id := m.Name
	for _, n := range pt.names {
		id += "_" + n + "=" + pt.params[n]
	}
	id += "_r" + strconv.Itoa(rep)
	l := s.scaleLoad(pt.setting.Load, sc)
	g := graphVariant(s.Graph, pt.setting.Payload, pt.setting.Protocol, pt.setting.Fanout)
	w := platform.Workload{Graph: g, Namespaces: pt.setting.Namespaces, Replicas: pt.setting.Replicas}
	// The generator calls the entry as the graph says: gRPC keeps its
	// connections and is HTTP/2 already, so keepalive and http2 (checked
	// by validate where the study sets them) do not apply to it.
	entry := g.EntryProtocol.Or()
	grpc := entry == topology.ProtocolGRPC
	http2 := (l.HTTP2 || entry == topology.ProtocolH2C) && !grpc
	// Likewise conn_requests, HTTP/1.1's, where a sweep changes the
	// protocol under it.
	connRequests := l.ConnRequests
	if grpc || http2 {
		connRequests = 0
	}
	method := "GET"
	if l.Upload > 0 {
		method = "POST"
	}
	return Cell{
		ID: id, Mesh: m, Repetition: rep, Params: pt.params, Group: group,
		Namespaces: pt.setting.Namespaces, Replicas: pt.setting.Replicas, Pods: w.Pods(),
		Payload: pt.setting.Payload, Protocol: pt.setting.Protocol, Fanout: pt.setting.Fanout,
		Load: infra.LoadSpec{
			Options: load.Options{
				Method: method, BodySize: l.Upload, Timeout: l.Timeout.D(), Rate: l.Rate, Connections: l.Connections,
				Duration: l.Duration.D(), Requests: l.Requests, Warmup: l.Warmup.D(),
				NoKeepAlive: !*l.KeepAlive && !grpc, HTTP2: http2, GRPC: grpc,
				ConnRequests: connRequests,
			},
			Path:         l.Path,
			PerNamespace: l.Generators == GeneratorsPerNamespace,
			Resources:    l.Resources,
			Tenants:      loadedOf(pt.setting),
		},
	}
}

// loadedOf is the LoadSpec's Tenants: the loaded count when fewer
// namespaces are loaded than deployed, else 0 (all).
func loadedOf(st setting) int {
	if st.Tenants > 0 && st.Tenants < st.Namespaces {
		return st.Tenants
	}
	return 0
}

// WorkloadOf is what the platform deploys for a cell.
func (s *Study) WorkloadOf(c Cell) platform.Workload {
	return platform.Workload{Graph: graphVariant(s.Graph, c.Payload, c.Protocol, c.Fanout), Namespaces: c.Namespaces, Replicas: c.Replicas}
}

// DefaultDir is where a run's results go without --out:
// results/<study>-<UTC time>.
func DefaultDir(study string, t time.Time) string {
	return filepath.Join("results", study+"-"+t.UTC().Format("20060102-150405"))
}
