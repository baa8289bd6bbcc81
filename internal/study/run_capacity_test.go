package study

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/search"
)

const searchSource = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: searchtest
workload: {graph: small-graph.yaml}
meshes: [{profile: baseline}, {profile: sidecar}, {profile: ambient}]
load: {connections: 16, warmup: 1s}
search:
  slo: {p99: 10ms, errors: 0.001}
  start_rate: 50
  trial: 2s
  trials: 6
`

func TestRunSearchFindsEachMeshCapacity(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	dir := filepath.Join(t.TempDir(), "out")
	var progress bytes.Buffer
	run(t, runOptions(t, searchSource, f, dir, &progress))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete || len(ix.Cells) != 0 || len(ix.Capacity) != 3 {
		t.Fatalf("complete %v, %d cells, %d capacities", ix.Complete, len(ix.Cells), len(ix.Capacity))
	}
	for _, c := range ix.Capacity {
		want := f.capacity[c.Profile] - math.Log(100)/0.010
		if c.Status != results.StatusOK || math.Abs(c.RPS-want) > 0.05*want {
			t.Errorf("%s: status %s, capacity %.1f, want %.1f within 5%%", c.Mesh, c.Status, c.RPS, want)
		}
		if c.Form() != search.FormInterval || c.CILow > c.RPS || c.CIHigh < c.RPS || c.SLO.P99 != 10e6 || c.BreachProbability != 0.5 {
			t.Errorf("%s: %s interval %.1f..%.1f, slo %+v", c.Mesh, c.Form(), c.CILow, c.CIHigh, c.SLO)
		}
		for _, tr := range c.Trials {
			cell, err := results.ReadCell(dir, results.Summary{ID: tr.ID, File: tr.File})
			if err != nil {
				t.Fatalf("%s: %v", tr.ID, err)
			}
			if cell.Merged == nil || cell.Merged.Latency.Count() == 0 || cell.Load.Options.Rate != tr.Rate || cell.Mesh != c.Mesh {
				t.Errorf("%s: the cell file does not hold the trial's histogram at %.1f req/s", tr.ID, tr.Rate)
			}
		}
	}
	// Trials of different meshes interleave: each mesh's trials come in
	// several blocks, none measuring much more than two visits (one at the
	// end of a round, one at the start of the next) of two confirmation
	// trials' time each.
	type visit struct {
		mesh     string
		measured time.Duration
	}
	var visits []visit
	for _, line := range strings.Split(progress.String(), "\n") {
		if !strings.HasPrefix(line, "[trial") {
			continue
		}
		f := strings.Fields(line)
		d, err := time.ParseDuration(strings.TrimSuffix(f[7], ":"))
		if err != nil {
			t.Fatalf("trial line %q: %v", line, err)
		}
		if len(visits) == 0 || visits[len(visits)-1].mesh != f[2] {
			visits = append(visits, visit{mesh: f[2]})
		}
		visits[len(visits)-1].measured += d
	}
	perMesh := map[string]int{}
	for _, v := range visits {
		perMesh[v.mesh]++
		if v.measured > 2*(2*5*time.Second+5*time.Second) {
			t.Errorf("a block of %s's trials measured %s, more than two visits", v.mesh, v.measured)
		}
	}
	for _, c := range ix.Capacity {
		if perMesh[c.Mesh] < 3 {
			t.Errorf("%s's trials came in %d visits; the meshes' trials do not interleave:\n%s", c.Mesh, perMesh[c.Mesh], progress.String())
		}
	}
}

// With a generator per namespace, every trial runs all the study's
// generators at a share of the trial's rate, and the search judges their
// merged result: the capacity is the total rate's.
func TestRunSearchWithEveryGenerator(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	src := strings.Replace(searchSource, "load: {connections: 16, warmup: 1s}", "load: {connections: 16, warmup: 1s, generators: per-namespace}", 1)
	src = strings.Replace(src, "workload: {graph: small-graph.yaml}", "workload: {graph: small-graph.yaml, namespaces: 2}", 1)
	dir := filepath.Join(t.TempDir(), "out")
	run(t, runOptions(t, src, f, dir, nil))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ix.Capacity {
		want := f.capacity[c.Profile] - math.Log(100)/0.010
		if c.Status != results.StatusOK || math.Abs(c.RPS-want) > 0.05*want {
			t.Errorf("%s: status %s, capacity %.1f, want the total rate's %.1f within 5%%", c.Mesh, c.Status, c.RPS, want)
		}
		for _, tr := range c.Trials {
			cell, err := results.ReadCell(dir, results.Summary{ID: tr.ID, File: tr.File})
			if err != nil {
				t.Fatalf("%s: %v", tr.ID, err)
			}
			var sum int64
			for _, g := range cell.Generators {
				sum += g.Latency.Count()
				if g.Options.Rate != tr.Rate/2 {
					t.Errorf("%s: a generator at %.2f req/s, want half the trial's %.1f", tr.ID, g.Options.Rate, tr.Rate)
				}
			}
			if len(cell.Generators) != 2 || cell.Merged == nil || cell.Merged.Latency.Count() != sum || tr.Requests != sum {
				t.Errorf("%s: %d generators, merged %v, trial counted %d of %d requests; want both generators merged",
					tr.ID, len(cell.Generators), cell.Merged != nil, tr.Requests, sum)
			}
		}
	}
}

func TestRunSearchSaturatedGenerator(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	f.saturateAbove = 300
	dir := filepath.Join(t.TempDir(), "out")
	run(t, runOptions(t, searchSource, f, dir, nil))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ix.Capacity {
		if c.RPS > 300 || !strings.Contains(c.Note, "could not be measured") {
			t.Errorf("%s: capacity %.1f, note %q; want at most the generator's 300 req/s, said", c.Mesh, c.RPS, c.Note)
		}
		var inconclusive int
		for _, tr := range c.Trials {
			if tr.Verdict == search.Inconclusive {
				inconclusive++
			}
		}
		if inconclusive == 0 {
			t.Errorf("%s: no inconclusive trial", c.Mesh)
		}
	}
}

func TestRunSearchMeshFailsToInstall(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	f.failInstall["sidecar"] = errInstall
	dir := filepath.Join(t.TempDir(), "out")
	run(t, runOptions(t, searchSource, f, dir, nil))
	ix, _ := results.ReadIndex(dir)
	for _, c := range ix.Capacity {
		failed := c.Status == results.StatusFailed
		if failed != (c.Mesh == "sidecar") || failed && !strings.Contains(c.Reason, "istiod") {
			t.Errorf("%s: status %s, reason %q", c.Mesh, c.Status, c.Reason)
		}
	}
}

func TestSearchCannotResume(t *testing.T) {
	t.Parallel()
	o := runOptions(t, searchSource, newFake(), t.TempDir(), nil)
	o.Resume = true
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrSearchResume) {
		t.Errorf("resume: %v, want ErrSearchResume", err)
	}
}

func TestParseSearchErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"no p99", "  slo: {p99: 10ms, errors: 0.001}\n=>  slo: {errors: 0.001}\n", "search.slo.p99"},
		{"error rate as percent", "errors: 0.001=>errors: 5", "search.slo.errors"},
		{"no start rate", "  start_rate: 50\n=>", "search.start_rate"},
		{"scaling without cells", "search:=>scaling: {fraction: 0.25}\nsearch:", "scaling"},
		{"negative trials", "trials: 6=>trials: -1", "search.trials"},
		{"too few trials to fit", "trials: 6=>trials: 2", "search"},
		{"sweeps without cells", "search:=>sweeps: [{param: connections, values: [8, 16]}]\nsearch:", "sweeps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			from, to, _ := strings.Cut(tc.edit, "=>")
			src := strings.Replace(searchSource, from, to, 1)
			if src == searchSource {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			_, err := Parse([]byte(src), "testdata")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// With a generator per namespace, a trial's total rate is shared among
// every generator of the study, and the platform runs them all.
func TestTrialCellSharesTheRate(t *testing.T) {
	t.Parallel()
	src := strings.Replace(searchSource, "load: {connections: 16, warmup: 1s}", "load: {connections: 16, warmup: 1s, generators: per-namespace}", 1)
	src = strings.Replace(src, "workload: {graph: small-graph.yaml}", "workload: {graph: small-graph.yaml, namespaces: 4}", 1)
	s, err := Parse([]byte(src), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	c := s.trialCell(s.Meshes[1], search.Step{Phase: search.PhaseLocate, Rate: 400, Duration: 5e9}, 7)
	o := c.Load.Options
	if o.Rate != 100 || !c.Load.PerNamespace || c.Namespaces != 4 || o.Duration != 5e9 || o.Warmup != 1e9 || o.Connections != 16 {
		t.Errorf("trial cell load %+v per-namespace %v namespaces %d; want 100 req/s per generator x 4 for 5s after 1s", o, c.Load.PerNamespace, c.Namespaces)
	}
	if c.ID != "search-sidecar-t07" || c.Params["rate"] != "400" {
		t.Errorf("id %q params %v", c.ID, c.Params)
	}
}

// connSearchSource searches over connections held open, each sending 0.5
// req/s.
var connSearchSource = strings.Replace(searchSource, "  start_rate: 50\n",
	"  over: connections\n  start_connections: 100\n  per_connection_rate: 0.5\n", 1)

// A search over connections holds the step's count open, each connection
// sending its slow requests; against the fake, whose latency grows with
// the rate, the ceiling is the capacity's rate over the per-connection
// rate, and the results say the capacity counts connections.
func TestRunSearchOverConnections(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	dir := filepath.Join(t.TempDir(), "out")
	var progress bytes.Buffer
	run(t, runOptions(t, connSearchSource, f, dir, &progress))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ix.Capacity {
		want := (f.capacity[c.Profile] - math.Log(100)/0.010) / 0.5
		if c.Status != results.StatusOK || c.Over != results.OverConnections || math.Abs(c.RPS-want) > 0.05*want {
			t.Errorf("%s: status %s over %q, ceiling %.1f, want %.1f connections within 5%%", c.Mesh, c.Status, c.Over, c.RPS, want)
		}
		for _, tr := range c.Trials {
			cell, err := results.ReadCell(dir, results.Summary{ID: tr.ID, File: tr.File})
			if err != nil {
				t.Fatalf("%s: %v", tr.ID, err)
			}
			if o := cell.Load.Options; o.Connections != int(math.Round(tr.Rate)) || o.Rate != 0.5*float64(o.Connections) {
				t.Errorf("%s: %d connections at %g req/s for a trial of %.1f connections", tr.ID, o.Connections, o.Rate, tr.Rate)
			}
		}
	}
	if !strings.Contains(progress.String(), "connections held open") {
		t.Errorf("progress does not say what the search varies:\n%s", progress.String())
	}
}

// churnCeilingSource is the churn preset's shape: cells at a fixed rate
// swept over the requests a connection carries, then a search over the
// connections held open.
var churnCeilingSource = strings.Replace(strings.Replace(connSearchSource, "load: {connections: 16", "load: {rate: 20, duration: 2s, connections: 16", 1),
	"search:", "sweeps: [{param: conn_requests, values: [0, 1]}]\nsearch:", 1)

// A study may sweep its cells' load and search too: the cells run at each
// swept value, and the search's trials on the study's own load, with
// their connections held open whatever the sweep closed.
func TestRunSweptCellsThenConnectionSearch(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	dir := filepath.Join(t.TempDir(), "out")
	run(t, runOptions(t, churnCeilingSource, f, dir, nil))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	swept := map[string]int{}
	for _, c := range ix.Cells {
		swept[c.Params["conn_requests"]]++
	}
	if swept["0"] == 0 || swept["1"] == 0 || len(ix.Capacity) != 3 {
		t.Fatalf("cells by conn_requests %v, %d ceilings; want cells at 0 and 1 and three ceilings", swept, len(ix.Capacity))
	}
	for _, c := range ix.Capacity {
		if c.Status != results.StatusOK || c.Over != results.OverConnections || c.RPS <= 0 {
			t.Errorf("%s: status %s over %q, ceiling %.1f", c.Mesh, c.Status, c.Over, c.RPS)
		}
		for _, tr := range c.Trials {
			cell, err := results.ReadCell(dir, results.Summary{ID: tr.ID, File: tr.File})
			if err != nil {
				t.Fatalf("%s: %v", tr.ID, err)
			}
			if o := cell.Load.Options; o.ConnRequests != 0 || o.NoKeepAlive || o.Connections != int(math.Round(tr.Rate)) {
				t.Errorf("%s: conn_requests %d, no keep-alive %v, %d connections; want connections held open, %.0f of them", tr.ID, o.ConnRequests, o.NoKeepAlive, o.Connections, tr.Rate)
			}
		}
	}
}

// A sweep that changes what is deployed cannot run beside a search, which
// measures the study's own workload.
func TestParseSearchRefusesWorkloadSweep(t *testing.T) {
	t.Parallel()
	src := strings.Replace(churnCeilingSource, "param: conn_requests, values: [0, 1]", "param: namespaces, values: [1, 2]", 1)
	_, err := Parse([]byte(src), "testdata")
	if err == nil || !strings.Contains(err.Error(), "sweeps[0]") || !strings.Contains(err.Error(), "namespaces") {
		t.Errorf("error %v, want one naming sweeps[0] and namespaces", err)
	}
}

func TestParseConnectionSearchErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"unknown over", "over: connections=>over: streams", "search.over"},
		{"no start", "  start_connections: 100\n=>", "search.start_connections"},
		{"no per-connection rate", "  per_connection_rate: 0.5\n=>", "search.per_connection_rate"},
		{"start rate too", "  over: connections\n=>  over: connections\n  start_rate: 50\n", "search.start_rate"},
		{"no keep-alive", "load: {connections: 16=>load: {keepalive: false, connections: 16", "load.keepalive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			from, to, _ := strings.Cut(tc.edit, "=>")
			src := strings.Replace(connSearchSource, from, to, 1)
			if src == connSearchSource {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			_, err := Parse([]byte(src), "testdata")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// A study with load.rate and a search runs its cells, then the search:
// the plan has both, and its estimate counts both.
func TestCellsThenSearch(t *testing.T) {
	t.Parallel()
	src := strings.Replace(searchSource, "load: {connections: 16", "load: {rate: 10, duration: 2s, connections: 16", 1)
	s, err := Parse([]byte(src), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if !s.HasCells() {
		t.Fatal("a study with load.rate and a search runs no cells")
	}
	p, err := NewPlan(s, s.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) == 0 || p.Search == nil {
		t.Fatalf("plan has %d cells and search %v; want both", len(p.Cells), p.Search)
	}
	pure, err := Parse([]byte(searchSource), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	pp, err := NewPlan(pure, pure.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	if pure.HasCells() || len(pp.Cells) != 0 {
		t.Errorf("a pure search plans %d cells", len(pp.Cells))
	}
	if p.Estimate <= pp.Estimate {
		t.Errorf("cells then search estimated %s, no more than the search alone (%s)", p.Estimate, pp.Estimate)
	}
}

// Run with load.rate and a search: every cell, then every mesh's search,
// into one results directory.
func TestRunCellsThenSearch(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	dir := filepath.Join(t.TempDir(), "out")
	var progress bytes.Buffer
	src := strings.Replace(searchSource, "load: {connections: 16", "load: {rate: 10, duration: 2s, connections: 16", 1)
	src = strings.Replace(src, "meshes:", "repetitions: 2\nmeshes:", 1)
	run(t, runOptions(t, src, f, dir, &progress))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete || len(ix.Cells) != 6 || len(ix.Capacity) != 3 {
		t.Fatalf("complete %v, %d cells, %d capacities; want 6 cells and 3", ix.Complete, len(ix.Cells), len(ix.Capacity))
	}
	for _, c := range ix.Capacity {
		if c.Status != results.StatusOK || c.RPS <= 0 {
			t.Errorf("%s: status %s, capacity %.1f", c.Mesh, c.Status, c.RPS)
		}
	}
	out := progress.String()
	if i, j := strings.Index(out, "[6/6]"), strings.Index(out, "[trial 1]"); i < 0 || j < 0 || i > j {
		t.Errorf("the cells did not run before the search:\n%s", out)
	}
	if !strings.Contains(out, "done: 6 cells and the capacity of 3 meshes") {
		t.Errorf("progress does not say both were done:\n%s", out)
	}
}

// A generator that runs out of local ports is at its own limit, not the
// mesh's: trials past it are no evidence, and each mesh's ceiling is a
// lower bound that says why, never a ceiling at the generator's ports.
func TestRunConnectionSearchGeneratorOutOfPorts(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	f.portsFor = 500
	dir := filepath.Join(t.TempDir(), "out")
	run(t, runOptions(t, connSearchSource, f, dir, nil))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ix.Capacity {
		if !c.LowerBound || c.RPS > 500 || !strings.Contains(c.Note, "could not be measured") || !strings.Contains(c.Note, "no free local port") {
			t.Errorf("%s: ceiling %.1f (lower bound %v), note %q; want a lower bound at most the generator's 500 connections, saying why", c.Mesh, c.RPS, c.LowerBound, c.Note)
		}
		for _, tr := range c.Trials {
			if tr.Rate > 500 && tr.Verdict != search.Inconclusive {
				t.Errorf("%s: a trial at %.0f connections, past the generator's ports, is %s (%s)", c.Mesh, tr.Rate, tr.Verdict, tr.Why)
			}
			if tr.Rate <= 500 {
				continue
			}
			cell, err := results.ReadCell(dir, results.Summary{ID: tr.ID, File: tr.File})
			if err != nil {
				t.Fatal(err)
			}
			if cell.Status != results.StatusDistorted || !strings.HasPrefix(cell.Reason, atOwnLimit) {
				t.Errorf("%s: cell %s, %q; want distorted by the load side's own limit", c.Mesh, cell.Status, cell.Reason)
			}
		}
	}
}

// With search.start_fraction, each mesh's search starts at that fraction
// of the closed-loop capacity its first deployment calibrated, not at
// start_rate: the fastest mesh skips the doublings up to it. The result
// keeps the start, so that its bootstrap replays the search as it ran.
func TestSearchStartsAtTheCalibratedCapacity(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.capacity = map[string]float64{"baseline": 1500, "ambient": 1200, "sidecar": 800}
	f.rates = map[string]float64{"baseline": 2000, "ambient": 1600, "sidecar": 1000}
	dir := filepath.Join(t.TempDir(), "out")
	src := strings.Replace(searchSource, "load: {connections: 16", "load: {rate: 10, duration: 2s, connections: 16", 1)
	src = strings.Replace(src, "  start_rate: 50\n", "  start_rate: 50\n  start_fraction: 0.5\n", 1)
	src = strings.Replace(src, "search:", "scaling: {fraction: 0.25}\nsearch:", 1)
	var progress bytes.Buffer
	run(t, runOptions(t, src, f, dir, &progress))
	ix, err := results.ReadIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Capacity) != 3 {
		t.Fatalf("%d capacities, want 3", len(ix.Capacity))
	}
	for _, c := range ix.Capacity {
		want := 0.5 * f.rates[c.Mesh]
		if len(c.Trials) == 0 || c.Trials[0].Rate != want || c.Config == nil || c.Config.Start != want {
			first := 0.0
			if len(c.Trials) > 0 {
				first = c.Trials[0].Rate
			}
			t.Errorf("%s: first trial at %g req/s (config %+v), want half its calibrated %g", c.Mesh, first, c.Config, f.rates[c.Mesh])
		}
		if wantCap := f.capacity[c.Profile] - math.Log(100)/0.010; c.Status != results.StatusOK || math.Abs(c.RPS-wantCap) > 0.05*wantCap {
			t.Errorf("%s: status %s, capacity %.1f, want %.1f within 5%%", c.Mesh, c.Status, c.RPS, wantCap)
		}
	}
	if !strings.Contains(progress.String(), "from 0.5 of each mesh's calibrated capacity (") {
		t.Errorf("progress does not say where the searches start:\n%s", progress.String())
	}
	// Without scaling there is no calibrated capacity to start from.
	bad := strings.Replace(searchSource, "  start_rate: 50\n", "  start_rate: 50\n  start_fraction: 0.5\n", 1)
	if _, err := Parse([]byte(bad), "testdata"); err == nil || !strings.Contains(err.Error(), "search.start_fraction") {
		t.Errorf("start_fraction without scaling: %v, want it refused naming search.start_fraction", err)
	}
}
