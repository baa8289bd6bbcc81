package study

import (
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/search"
)

// TestPlanPoissonArrivals checks what a study with Poisson arrivals
// plans: every open-loop cell sends Poisson arrivals from a seed that the
// study's seed and the cell give (the same for every mesh of a round at a
// configuration, another in every other round and configuration, the same
// again when planned again), and a closed-loop calibration and a study
// left at the default carry no arrival process or seed.
func TestPlanPoissonArrivals(t *testing.T) {
	t.Parallel()
	const body = `
meshes: [{profile: baseline}, {profile: sidecar}]
load: {rate: 100, duration: 10s, arrivals: poisson}
sweeps:
- {param: connections, values: [16, 32]}
repetitions: 2
`
	s := parseStudy(t, body)
	p := plan(t, s, s.ScalingFor(0))
	bySetting := map[string]uint64{}
	seeds := map[uint64]string{}
	for _, c := range p.Cells {
		o := c.Load.Options
		if o.Arrivals != load.ArrivalsPoisson || o.Seed == 0 {
			t.Fatalf("cell %s: arrivals %q seed %d, want poisson with a seed", c.ID, o.Arrivals, o.Seed)
		}
		key := strings.TrimPrefix(c.ID, c.Mesh.Name)
		if seed, ok := bySetting[key]; ok {
			if seed != o.Seed {
				t.Errorf("cell %s: seed %d, another mesh's in the same round %d", c.ID, o.Seed, seed)
			}
			continue
		}
		bySetting[key] = o.Seed
		if other, dup := seeds[o.Seed]; dup {
			t.Errorf("cells %s and %s of different rounds or configurations share seed %d", other, c.ID, o.Seed)
		}
		seeds[o.Seed] = c.ID
	}
	if len(bySetting) != 4 {
		t.Errorf("%d seeds for 2 configurations x 2 rounds", len(bySetting))
	}
	again := plan(t, parseStudy(t, body), s.ScalingFor(0))
	for i, c := range again.Cells {
		if c.Load.Options.Seed != p.Cells[i].Load.Options.Seed {
			t.Fatalf("cell %s planned again with seed %d, was %d", c.ID, c.Load.Options.Seed, p.Cells[i].Load.Options.Seed)
		}
	}
	other := parseStudy(t, body+"order: {seed: 12345}\n")
	if c := plan(t, other, other.ScalingFor(0)).Cells[0]; c.Load.Options.Seed == p.Cells[0].Load.Options.Seed {
		t.Error("another study seed gave the same arrivals' seed")
	}
	cal, err := s.calibrationCell(s.Meshes[0])
	if err != nil {
		t.Fatal(err)
	}
	if o := cal.Load.Options; o.Arrivals != "" || o.Seed != 0 {
		t.Errorf("closed-loop calibration carries arrivals %q seed %d: the generator would refuse it", o.Arrivals, o.Seed)
	}
	if !strings.Contains(loadText(p.Cells[0].Load), "poisson") {
		t.Errorf("--plan's load %q does not say poisson", loadText(p.Cells[0].Load))
	}
	def := parseStudy(t, threeMeshes)
	for _, c := range plan(t, def, def.ScalingFor(0)).Cells {
		if o := c.Load.Options; o.Arrivals != "" || o.Seed != 0 {
			t.Fatalf("a study without arrivals plans %q seed %d", o.Arrivals, o.Seed)
		}
	}
}

// TestSearchTrialsPoisson: a search study's trials are open loops and
// take the study's arrivals, even where the study has no rate of its own.
func TestSearchTrialsPoisson(t *testing.T) {
	t.Parallel()
	s := parseStudy(t, `
meshes: [{profile: baseline}]
load: {arrivals: poisson}
search: {slo: {p99: 10ms}, start_rate: 100}
`)
	c := s.trialCell(s.Meshes[0], search.Step{Rate: 200, Duration: s.Search.Config().Trial}, 1)
	if o := c.Load.Options; o.Arrivals != load.ArrivalsPoisson || o.Seed == 0 || o.Rate != 200 {
		t.Errorf("trial options %+v, want poisson arrivals at 200 req/s with a seed", o)
	}
}
