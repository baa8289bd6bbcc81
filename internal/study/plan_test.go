package study

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/topology"
)

// parseStudy parses a study written in a test, with the small graph.
func parseStudy(t *testing.T, body string) *Study {
	t.Helper()
	src := "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: test\nworkload:\n  graph: small-graph.yaml\n" + body
	s, err := Parse([]byte(src), "testdata")
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return s
}

func plan(t *testing.T, s *Study, sc results.Scaling) *Plan {
	t.Helper()
	p, err := NewPlan(s, sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func meshOrder(p *Plan) string {
	var names []string
	for _, c := range p.Cells {
		names = append(names, c.Mesh.Name)
	}
	return strings.Join(names, " ")
}

const threeMeshes = `
meshes: [{profile: baseline}, {profile: sidecar}, {profile: ambient}]
load: {rate: 100, duration: 10s, warmup: 2s}
sweeps:
- {param: connections, values: [16, 32]}
`

func TestPlanInterleavesMeshesWithoutShuffle(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, threeMeshes+"repetitions: 2\norder: {shuffle: false}\n")
	p := plan(t, s, s.ScalingFor(0))
	want := strings.Repeat("baseline sidecar ambient ", 4)
	if got := meshOrder(p); got != strings.TrimSpace(want) {
		t.Fatalf("order %q\nwant %q", got, want)
	}
	var reps, conns []string
	for _, c := range p.Cells {
		reps = append(reps, fmt.Sprint(c.Repetition))
		conns = append(conns, c.Params["connections"])
	}
	if got := strings.Join(reps, ""); got != "111111222222" {
		t.Errorf("repetitions in order %s: every round of a repetition comes before the next", got)
	}
	if got := strings.Join(conns, ","); got != "16,16,16,32,32,32,16,16,16,32,32,32" {
		t.Errorf("connections in order %s", got)
	}
}

// TestPlanShuffleKeepsRounds checks that shuffling only reorders meshes
// within a round: each run of len(meshes) cells shares its sweep values and
// repetition and holds every mesh once.
func TestPlanShuffleKeepsRounds(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, threeMeshes+"repetitions: 5\norder: {seed: 7}\n")
	p := plan(t, s, s.ScalingFor(0))
	if len(p.Cells) != 30 {
		t.Fatalf("%d cells, want 3 meshes x 2 connections x 5 repetitions = 30", len(p.Cells))
	}
	declared := 0
	for i := 0; i < len(p.Cells); i += 3 {
		round := p.Cells[i : i+3]
		var names []string
		for _, c := range round {
			names = append(names, c.Mesh.Name)
			if c.Repetition != round[0].Repetition || c.Params["connections"] != round[0].Params["connections"] {
				t.Fatalf("round at %d mixes cells: %+v", i, round)
			}
		}
		if strings.Join(names, " ") == "baseline sidecar ambient" {
			declared++
		}
		slices.Sort(names)
		if strings.Join(names, " ") != "ambient baseline sidecar" {
			t.Fatalf("round at %d runs meshes %v, want each once", i, names)
		}
	}
	if declared == 10 {
		t.Error("every round kept the declared order: the shuffle did nothing")
	}
	if again := plan(t, s, s.ScalingFor(0)); meshOrder(again) != meshOrder(p) {
		t.Error("the same study and seed planned two orders")
	}
	other := parseStudy(t, threeMeshes+"repetitions: 5\norder: {seed: 8}\n")
	if meshOrder(plan(t, other, other.ScalingFor(0))) == meshOrder(p) {
		t.Error("seeds 7 and 8 planned the same order")
	}
}

// TestPlanGroupsWorkloadShapes checks that cells sharing a workload shape
// run together, so each shape deploys once, while meshes still interleave.
func TestPlanGroupsWorkloadShapes(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, `
meshes: [{profile: baseline}, {profile: sidecar}]
load: {duration: 5s}
sweeps:
- {param: connections, values: [8, 16]}
- {param: replicas.back, values: [1, 2, 4]}
- {param: namespaces, values: [1, 2]}
repetitions: 2
`)
	p := plan(t, s, s.ScalingFor(0))
	if p.Groups != 6 {
		t.Fatalf("%d groups, want 3 replica counts x 2 namespace counts", p.Groups)
	}
	// Within a deployment each group deploys once; the next deployment
	// deploys them all afresh.
	seen := map[[2]int]bool{}
	prev := [2]int{}
	ids := map[string]bool{}
	for _, c := range p.Cells {
		if k := [2]int{c.Deployment, c.Group}; k != prev {
			if seen[k] {
				t.Fatalf("group %d comes back after another group in deployment %d: it would deploy twice", c.Group, c.Deployment)
			}
			if k[0] < prev[0] {
				t.Fatalf("deployment %d after deployment %d", k[0], prev[0])
			}
			seen[k], prev = true, k
		}
		if ids[c.ID] {
			t.Fatalf("duplicate cell ID %s", c.ID)
		}
		ids[c.ID] = true
		if c.Replicas["back"] == 0 || fmt.Sprint(c.Replicas["back"]) != c.Params["replicas.back"] {
			t.Fatalf("cell %s deploys replicas %v", c.ID, c.Replicas)
		}
	}
	if len(p.Cells) != 2*2*3*2*2 {
		t.Fatalf("%d cells", len(p.Cells))
	}
}

func TestPlanLinkedSweep(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, `
meshes: [{profile: baseline}]
load: {requests: 1000}
sweeps:
- params: [path, requests]
  values: [[service, 1000], [ingress, 500]]
repetitions: 1
`)
	p := plan(t, s, s.ScalingFor(0))
	if len(p.Cells) != 2 {
		t.Fatalf("%d cells, want 2: linked values change together", len(p.Cells))
	}
	c := p.Cells[1]
	if c.Load.Path != "ingress" || c.Load.Options.Requests != 500 || c.ID != "baseline_path=ingress_requests=500_r1" {
		t.Errorf("cell %+v", c)
	}
}

func TestScaleLoad(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, `
meshes: [{profile: baseline}]
load: {rate: 450, connections: 100, duration: 600s, warmup: 30s, generators: per-namespace}
scaling: {fraction: 0.5, measure: 20s, warmup: 5s}
repetitions: 1
`)
	tests := []struct {
		name        string
		sc          results.Scaling
		rate        float64
		duration    time.Duration
		warmup      time.Duration
		connections int
	}{
		{"none", results.Scaling{Mode: results.ScaleNone, Factor: 1}, 450, 600 * time.Second, 30 * time.Second, 100},
		// Each connection keeps the study's 4.5 req/s; a factor given
		// with --scale caps the phases as a calibrated one does, so that a
		// run at another's factor runs that run's load.
		{"factor caps like a calibration", results.Scaling{Mode: results.ScaleFactor, Factor: 0.1}, 45, 20 * time.Second, 5 * time.Second, 10},
		{"calibrated", results.Scaling{Mode: results.ScaleCalibrated, Factor: 0.02}, 9, 20 * time.Second, 5 * time.Second, 2},
		{"never below one connection", results.Scaling{Mode: results.ScaleCalibrated, Factor: 0.0007}, 0.32, 20 * time.Second, 5 * time.Second, 1},
		{"calibration pending", results.Scaling{Mode: results.ScaleCalibrated}, 450, 20 * time.Second, 5 * time.Second, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := plan(t, s, tt.sc).Cells[0].Load.Options
			if o.Rate != tt.rate || o.Duration != tt.duration || o.Warmup != tt.warmup || o.Connections != tt.connections {
				t.Errorf("rate %g, duration %s, warm-up %s, connections %d", o.Rate, o.Duration, o.Warmup, o.Connections)
			}
		})
	}
}

// TestScaleLoadMinRequests checks that a scaled-down open loop still
// measures enough requests for the percentiles a report shows.
func TestScaleLoadMinRequests(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, `
meshes: [{profile: baseline}]
load: {rate: 200, connections: 32, duration: 10s, warmup: 3s}
scaling: {fraction: 0.2, measure: 10s, warmup: 3s, min_requests: 1200}
repetitions: 1
`)
	tests := []struct {
		factor   float64
		duration time.Duration
	}{
		{1, 10 * time.Second},    // 2000 requests in 10 s
		{0.5, 12 * time.Second},  // 100 req/s needs 12 s
		{0.14, 43 * time.Second}, // 28 req/s, a busy machine's calibration
	}
	for _, tt := range tests {
		o := plan(t, s, results.Scaling{Mode: results.ScaleCalibrated, Factor: tt.factor}).Cells[0].Load.Options
		if o.Duration != tt.duration || float64(o.Duration/time.Second)*o.Rate < 1200 {
			t.Errorf("factor %g: %g req/s for %s, want %s and at least 1200 requests", tt.factor, o.Rate, o.Duration, tt.duration)
		}
	}
}

func TestCalibrate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		factor float64
	}{
		// 2 namespaces x 100 rps offered; half of 200 rps capacity is 100.
		{"open loop", "load: {rate: 100, duration: 60s, generators: per-namespace}\nworkload: {graph: small-graph.yaml, namespaces: 2}\n", 0.5},
		// 10000 requests should take 20 s at 200 rps: 4000 requests.
		{"closed loop", "load: {requests: 10000}\n", 0.4},
		{"never grows", "load: {rate: 10, duration: 60s}\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: test\nmeshes: [{profile: baseline}, {profile: sidecar}, {profile: ambient}]\nscaling: {fraction: 0.5}\n" + tt.body
			if !strings.Contains(tt.body, "workload") {
				src += "workload: {graph: small-graph.yaml}\n"
			}
			s, err := Parse([]byte(src), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			// The slowest mesh, not the baseline, sets the factor.
			sc, err := s.calibrate(s.ScalingFor(0), map[string]float64{"baseline": 1000, "sidecar": 200, "ambient": 400})
			if err != nil {
				t.Fatal(err)
			}
			if sc.Mode != results.ScaleCalibrated || sc.BaselineCapacity != 1000 || sc.Reference != "sidecar" || fmt.Sprintf("%.4f", sc.Factor) != fmt.Sprintf("%.4f", tt.factor) {
				t.Errorf("scaling %+v, want factor %g", sc, tt.factor)
			}
		})
	}
}

func TestCalibrateWithoutCapacity(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, "meshes: [{profile: baseline}]\nload: {rate: 10, duration: 60s}\nscaling: {}\n")
	if _, err := s.calibrate(s.ScalingFor(0), map[string]float64{}); err == nil || !strings.Contains(err.Error(), "no mesh served a request") {
		t.Errorf("calibrate with no capacity: %v", err)
	}
}

func TestPlanEstimate(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, threeMeshes+"repetitions: 1\norder: {shuffle: false}\n")
	p := plan(t, s, s.ScalingFor(0))
	lab := setupTimes[PlatformLab]
	// 6 cells of 12 s, one deployment, and a mesh change at every cell.
	// Proxies started per round: baseline 1 (the ingress gateway),
	// sidecar 4 (front, back and the load generator, plus the gateway),
	// ambient 4 (one per node of the default 3, plus the gateway): none
	// beyond the four that start side by side.
	want := 6*12*time.Second + lab.deploy + 6*lab.install
	if lab.parallelProxies != 4 {
		t.Fatalf("the want above assumes four proxies start side by side, not %d", lab.parallelProxies)
	}
	if p.Estimate != want {
		t.Errorf("estimate %s, want %s", p.Estimate, want)
	}
	// Fifty tenants mean fifty times the sidecars to start.
	s50, err := Parse([]byte("apiVersion: meshbench.dev/v1alpha1\nkind: Study\nname: test\n"+
		"workload: {graph: small-graph.yaml, namespaces: 50}\n"+threeMeshes+"repetitions: 1\norder: {shuffle: false}\n"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	p50 := plan(t, s50, s50.ScalingFor(0))
	if grow := p50.Estimate - p.Estimate; grow < 2*(50-1)*2*lab.perProxy {
		t.Errorf("50 namespaces add %s to the estimate, want at least the time to start 196 more sidecars", grow)
	}
}

// TestPlanFitsPhasesToKubernetesMetrics: quick's short phases on
// Kubernetes would have no CPU or memory sample; the plan lengthens them
// to four sampling intervals, and says so.
func TestPlanFitsPhasesToKubernetesMetrics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		platform string
		interval string
		want     time.Duration
		note     bool
	}{
		{"lab", "", 5 * time.Second, false},
		{"kubernetes", "", 4 * infra.KubernetesSampleInterval, true},
		{"kubernetes", "1s", 6 * time.Second, false},
		{"kubernetes", "10s", 40 * time.Second, true},
	} {
		o := PlatformOverride{Type: tc.platform}
		if tc.platform == PlatformKubernetes {
			o.Image = "registry.example/meshbench:v0"
		}
		s, _, err := Preset("quick", o)
		if err != nil {
			t.Fatal(err)
		}
		if tc.interval != "" {
			d, _ := time.ParseDuration(tc.interval)
			s.Platform.Kubernetes.SampleInterval = topology.Duration(d)
		}
		p, err := NewPlan(s, s.ScalingFor(0))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Cells {
			if c.Load.Options.Duration != tc.want {
				t.Fatalf("%s every %q: cell %s measures %s, want %s", tc.platform, tc.interval, c.ID, c.Load.Options.Duration, tc.want)
			}
		}
		if got := len(p.Notes) == 1 && strings.Contains(p.Notes[0], "lengthened to "+tc.want.String()); got != tc.note {
			t.Errorf("%s every %q: notes %q, want a note: %v", tc.platform, tc.interval, p.Notes, tc.note)
		}
	}
}

// TestSoloTieredLinkerdOnKubernetes: the seed's Linkerd figures are
// compared where Linkerd runs, and the lab's plan leaves Linkerd out.
func TestSoloTieredLinkerdOnKubernetes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		platform string
		linkerd  bool
	}{{PlatformKubernetes, true}, {PlatformLab, false}} {
		o := PlatformOverride{Type: tc.platform}
		if tc.platform == PlatformKubernetes {
			o.Image = "registry.example/meshbench:v0"
		}
		s, _, err := Preset("solo-tiered", o)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(s, s.ScalingFor(1))
		if err != nil {
			t.Fatal(err)
		}
		cells := 0
		for _, c := range p.Cells {
			if c.Mesh.Profile == mesh.ProfileLinkerd {
				cells++
			}
		}
		figures := 0
		for _, f := range s.Published {
			if f.Mesh == "linkerd" {
				figures++
			}
		}
		if (cells > 0) != tc.linkerd || (figures == 2) != tc.linkerd {
			t.Errorf("%s: %d Linkerd cells and %d published Linkerd figures; want Linkerd: %v", tc.platform, cells, figures, tc.linkerd)
		}
	}
}
