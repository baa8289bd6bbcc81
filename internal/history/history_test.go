package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/resultstest"
	"github.com/meshbench/meshbench/internal/testenv"
)

// fixtureRoot holds the fixture results directories the tests share,
// written once, on first use.
var (
	fixtureRoot string
	fixtureOnce sync.Once
	fixtureErr  error
	aaDirs      []string // one release measured 8 times
	stepDirs    []string // 8 runs, the sidecar 30% slower from the 5th
)

// The injected step: from StepAt on, the runs record Envoy StepRelease
// and the sidecar is StepSlowdown times slower.
const (
	stepAt       = 4
	oldRelease   = "1.39.1"
	stepRelease  = "1.39.3"
	stepSlowdown = 1.3
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureRoot != "" {
		os.RemoveAll(fixtureRoot)
	}
	os.Exit(code)
}

func fixtures(t *testing.T) {
	t.Helper()
	fixtureOnce.Do(func() {
		if fixtureRoot, fixtureErr = os.MkdirTemp("", "meshbench-history-test-"); fixtureErr != nil {
			return
		}
		for i := range 8 {
			start := resultstest.Start.Add(time.Duration(i) * 24 * time.Hour)
			aa := filepath.Join(fixtureRoot, fmt.Sprintf("aa-%d", i))
			if _, fixtureErr = resultstest.Write(aa, resultstest.Options{Seed: uint64(1 + i), Start: start, Requests: 3000, EnvoyRelease: oldRelease}); fixtureErr != nil {
				return
			}
			aaDirs = append(aaDirs, aa)
			o := resultstest.Options{Seed: uint64(11 + i), Start: start, Requests: 3000, EnvoyRelease: oldRelease}
			if i >= stepAt {
				o.EnvoyRelease, o.Slowdown = stepRelease, map[string]float64{resultstest.Sidecar: stepSlowdown}
			}
			step := filepath.Join(fixtureRoot, fmt.Sprintf("step-%d", i))
			if _, fixtureErr = resultstest.Write(step, o); fixtureErr != nil {
				return
			}
			stepDirs = append(stepDirs, step)
		}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
}

// read reads a fixture directory once; tests that change a Run change a
// copy.
func read(t *testing.T, dir string) *Run {
	t.Helper()
	readMu.Lock()
	defer readMu.Unlock()
	r, ok := readRuns[dir]
	if !ok {
		var err error
		if r, err = Read(dir); err != nil {
			t.Fatal(err)
		}
		readRuns[dir] = r
	}
	c := *r
	return &c
}

var (
	readMu   sync.Mutex
	readRuns = map[string]*Run{}
)

func openSQLite(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// PostgresEnv names the server the PostgreSQL tests use, as a URL whose
// user may create databases; scripts/test.sh starts a private one.
const PostgresEnv = "MESHBENCH_POSTGRES"

// openPostgres makes a database of the test's own on the server
// PostgresEnv names, and drops it when the test ends.
func openPostgres(t *testing.T) *Store {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	testenv.Need(t, base != "", "a PostgreSQL server in %s (scripts/test.sh starts one; scripts/setup.sh test installs postgresql)", PostgresEnv)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	name := fmt.Sprintf("mbtest_%d_%d", os.Getpid(), time.Now().UnixNano())
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("%s: create database: %v", PostgresEnv, err)
	}
	t.Cleanup(func() {
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u := withDatabase(t, base, name)
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// withDatabase is the URL with its database replaced.
func withDatabase(t *testing.T, base, db string) string {
	t.Helper()
	scheme, rest, _ := strings.Cut(base, "://")
	hostPart, query, _ := strings.Cut(rest, "?")
	host, _, _ := strings.Cut(hostPart, "/")
	u := scheme + "://" + host + "/" + db
	if query != "" {
		u += "?" + query
	}
	return u
}

func TestStoreSQLite(t *testing.T) { storeSuite(t, openSQLite) }

func TestIntegrationStorePostgres(t *testing.T) {
	testenv.Integration(t)
	testenv.Need(t, os.Getenv(PostgresEnv) != "", "a PostgreSQL server in %s (scripts/test.sh starts one; scripts/setup.sh test installs postgresql)", PostgresEnv)
	storeSuite(t, openPostgres)
}

// storeSuite is every test a backend must pass, SQLite and PostgreSQL
// alike.
func storeSuite(t *testing.T, open func(*testing.T) *Store) {
	fixtures(t)
	ctx := context.Background()

	t.Run("a run round-trips, and adding it again is a no-op", func(t *testing.T) {
		s := open(t)
		r := read(t, aaDirs[0])
		for i, want := range []bool{true, false} {
			added, err := s.Add(ctx, r)
			if err != nil || added != want {
				t.Fatalf("add #%d: added %v, err %v; want added %v", i+1, added, err, want)
			}
		}
		runs, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 {
			t.Fatalf("%d runs after adding one twice", len(runs))
		}
		got := runs[0]
		if got.ID != r.ID || got.IndexSHA256 != r.IndexSHA256 || !got.Start.Equal(r.Start) || got.HostClass != r.HostClass ||
			got.Provenance.Platform.CPUModel != r.Provenance.Platform.CPUModel || got.Provenance.Noise != r.Provenance.Noise {
			t.Errorf("run read back differs:\n got %+v\nwant %+v", got, r)
		}
		if !slices.EqualFunc(got.Meshes, r.Meshes, meshEqual) {
			t.Errorf("meshes read back differ:\n got %+v\nwant %+v", got.Meshes, r.Meshes)
		}
		sortFigures(got.Figures)
		want := slices.Clone(r.Figures)
		sortFigures(want)
		if !slices.EqualFunc(got.Figures, want, figureEqual) {
			t.Errorf("%d figures read back, %d added, or they differ", len(got.Figures), len(want))
		}
		// Only some metrics, when asked.
		if runs, err = s.Load(ctx, PrimaryMetrics...); err != nil {
			t.Fatal(err)
		}
		for _, f := range runs[0].Figures {
			if !slices.Contains(PrimaryMetrics, f.Metric) {
				t.Fatalf("Load(primary metrics) returned %s", f.Metric)
			}
		}
		if len(runs[0].Figures) == 0 {
			t.Error("Load(primary metrics) returned no figure")
		}
	})

	t.Run("the same run with another study.json is refused", func(t *testing.T) {
		s := open(t)
		if _, err := s.Add(ctx, read(t, aaDirs[1])); err != nil {
			t.Fatal(err)
		}
		edited := read(t, aaDirs[1])
		edited.IndexSHA256 = strings.Repeat("0", 64)
		if _, err := s.Add(ctx, edited); !errors.Is(err, ErrChanged) {
			t.Errorf("err %v, want ErrChanged", err)
		}
	})

	// `run --resume` measures again the cells a finished run left out
	// (noisy ones): the run keeps its ID and start, and its study.json
	// changes and ends later. Adding it again replaces what the history
	// held of it.
	t.Run("a run resumed since it was added replaces it", func(t *testing.T) {
		s := open(t)
		r := read(t, aaDirs[2])
		if _, err := s.Add(ctx, r); err != nil {
			t.Fatal(err)
		}
		resumed := read(t, aaDirs[2])
		resumed.IndexSHA256 = strings.Repeat("1", 64)
		resumed.End = r.End.Add(time.Hour)
		resumed.Excluded = r.Excluded + 1
		resumed.Figures = slices.Clone(r.Figures)
		resumed.Figures[0].Median *= 2
		added, err := s.Add(ctx, resumed)
		if err != nil || !added {
			t.Fatalf("adding the resumed run: added %v, err %v; want it added in place of the first", added, err)
		}
		runs, err := s.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].IndexSHA256 != resumed.IndexSHA256 || !runs[0].End.Equal(resumed.End) || runs[0].Excluded != resumed.Excluded {
			t.Fatalf("after adding the resumed run the history holds %d runs, the first %+v", len(runs), runs[0])
		}
		got, want := runs[0].Figures, slices.Clone(resumed.Figures)
		sortFigures(got)
		sortFigures(want)
		if !slices.EqualFunc(got, want, figureEqual) || !slices.EqualFunc(runs[0].Meshes, resumed.Meshes, meshEqual) {
			t.Errorf("the resumed run's figures or meshes were not what the history holds now")
		}
		// The first state again, which ended earlier, is not the newer one.
		if _, err := s.Add(ctx, r); !errors.Is(err, ErrChanged) {
			t.Errorf("adding the run as it was before its resumption: err %v, want ErrChanged", err)
		}
	})

	t.Run("a newer schema is refused", func(t *testing.T) {
		s := open(t)
		if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied) VALUES ($1, $2)`, SchemaVersion+1, stamp(time.Now())); err != nil {
			t.Fatal(err)
		}
		err := s.migrate(ctx)
		if err == nil || !strings.Contains(err.Error(), "use a newer meshbench") {
			t.Errorf("migrating a schema-%d history: %v, want a refusal", SchemaVersion+1, err)
		}
	})

	t.Run("the gate passes A/A runs and fails the injected step", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			dirs []string
			// The first run after which the gate fails, or -1, and the
			// latest it may first fail.
			first, latest int
		}{
			{"A/A", aaDirs, -1, -1},
			// The step is in the 5th run (index 4). With 4 runs before it, a
			// permutation test of 6 points cannot reach p <= 0.05 (15
			// arrangements put 2 points apart); with 7 (35 arrangements) it
			// can, at p near its floor of 1/35 against Alpha's 0.04, so
			// whether 3 runs showing the step suffice depends on the noise
			// (the fixture's percentiles moved when its failed requests
			// went to the timeout, and 3 no longer do); 4 runs do.
			{"step", stepDirs, stepAt + 2, stepAt + 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := open(t)
				first := -1
				for i, dir := range tc.dirs {
					if _, err := s.Add(ctx, read(t, dir)); err != nil {
						t.Fatal(err)
					}
					runs, err := s.Load(ctx, PrimaryMetrics...)
					if err != nil {
						t.Fatal(err)
					}
					v := Check(runs, 1)
					for _, f := range v.Regressions {
						if first < 0 {
							first = i
						}
						t.Logf("after run %d: %s: %s", i, f.Title(), f.Describe(f.Change))
						if f.Change.At != stepAt || !slices.Contains(f.Change.Provenance, "Envoy "+oldRelease+" → "+stepRelease) {
							t.Errorf("after run %d the gate failed on a change point not at the step: %s", i, f.Describe(f.Change))
						}
					}
					if i == len(tc.dirs)-1 {
						checkLastVerdict(t, v, tc.name == "step")
					}
				}
				if (tc.first < 0 && first >= 0) || (tc.first >= 0 && (first < tc.first || first > tc.latest)) {
					t.Errorf("the gate first failed after run %d (0-based), want %d to %d", first, tc.first, tc.latest)
				}
			})
		}
	})
}

// checkLastVerdict checks the series the gate read with every run: the
// sidecar's latency series change where the step is, by its size, naming
// the release, and the other series have false change points no more often
// than the permutation test's level allows.
func checkLastVerdict(t *testing.T, v *Verdict, step bool) {
	t.Helper()
	var others, falseAlarms, stepped, found int
	for _, a := range v.Series {
		if !step || a.Profile != "sidecar" {
			others++
			if len(a.Changes) > 0 {
				falseAlarms++
				t.Logf("a false change point: %s: %s", a.Title(), a.Describe(a.Changes[0]))
			}
			continue
		}
		if !a.Metric().IsLatency() {
			continue
		}
		stepped++
		for _, c := range a.Changes {
			if c.At != stepAt {
				t.Errorf("%s: a change point off the step: %s", a.Title(), a.Describe(c))
				continue
			}
			found++
			if !slices.Contains(c.Provenance, "Envoy "+oldRelease+" → "+stepRelease) {
				t.Errorf("%s: the change's provenance %q does not name the release", a.Title(), c.Provenance)
			}
			if c.Diff.Pct.Median < 20 || !c.Diff.Measurable() {
				t.Errorf("%s: a %+.1f%% change (measurable %v), want the 30%% slowdown's, measurably", a.Title(), c.Diff.Pct.Median, c.Diff.Measurable())
			}
		}
	}
	t.Logf("%d of %d series without a step have a change point; the step found in %d of the sidecar's %d latency series", falseAlarms, others, found, stepped)
	// 5% of series, and a little more for a sample of a few dozen.
	if float64(falseAlarms) > 0.10*float64(others) {
		t.Errorf("%d of %d series without a step have a change point", falseAlarms, others)
	}
	if step && float64(found) < 0.8*float64(stepped) {
		t.Errorf("the step found in %d of the sidecar's %d latency series", found, stepped)
	}
}

func meshEqual(a, b Mesh) bool {
	return a.Name == b.Name && a.Profile == b.Profile && a.Spec == b.Spec && a.Release == b.Release && a.Build == b.Build &&
		a.Istiod == b.Istiod && a.ConfigHash == b.ConfigHash && fmt.Sprint(a.Facts) == fmt.Sprint(b.Facts)
}

func figureEqual(a, b Figure) bool {
	return a.Mesh == b.Mesh && a.Config == b.Config && fmt.Sprint(a.Params) == fmt.Sprint(b.Params) && a.Metric == b.Metric &&
		a.Median == b.Median && a.Lo == b.Lo && a.Hi == b.Hi && a.N == b.N && a.Level == b.Level
}

func sortFigures(fs []Figure) {
	slices.SortFunc(fs, func(a, b Figure) int {
		return strings.Compare(a.Mesh+"\x00"+a.Config+"\x00"+a.Metric, b.Mesh+"\x00"+b.Config+"\x00"+b.Metric)
	})
}

func TestReadRefuses(t *testing.T) {
	fixtures(t)
	copyDir := func(t *testing.T, src string) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "run")
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	editIndex := func(t *testing.T, dir string, edit func(*results.Index)) {
		t.Helper()
		ix, err := results.ReadIndex(dir)
		if err != nil {
			t.Fatal(err)
		}
		edit(ix)
		if err := results.WriteJSON(dir, results.IndexFile, ix); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"an interrupted run", func(t *testing.T, dir string) {
			editIndex(t, dir, func(ix *results.Index) { ix.Complete = false })
		}, "not complete"},
		{"a cell file changed since the run", func(t *testing.T, dir string) {
			ix, err := results.ReadIndex(dir)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(filepath.Join(dir, ix.Cells[3].File), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(" ")
			f.Close()
		}, "not what the run wrote"},
		{"an edited study file", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, results.StudyFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("repetitions: 99\n")
			f.Close()
		}, "edited after the run"},
		{"a mesh name no run writes", func(t *testing.T, dir string) {
			editIndex(t, dir, func(ix *results.Index) {
				for i := range ix.Cells {
					if ix.Cells[i].Mesh == resultstest.Sidecar {
						ix.Cells[i].Mesh = strings.Repeat("m", 300)
					}
				}
			})
		}, "more than 256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDir(t, aaDirs[0])
			tt.damage(t, dir)
			_, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestReadFigures(t *testing.T) {
	t.Parallel()
	// An open loop, whose latency overheads are the mesh's own (the
	// fixtures are a closed loop, which has none).
	dir := t.TempDir()
	if _, err := resultstest.Write(dir, resultstest.Options{Seed: 1, Requests: 3000, EnvoyRelease: oldRelease, Rate: 100}); err != nil {
		t.Fatal(err)
	}
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Meshes) != 3 || r.Meshes[0].Name != resultstest.Baseline {
		t.Fatalf("meshes %+v, want the fixture's three, baseline first", r.Meshes)
	}
	sidecar := r.Meshes[2]
	if sidecar.Name != resultstest.Sidecar || sidecar.Release != oldRelease || !strings.Contains(sidecar.Build, "/"+oldRelease+"/") {
		t.Errorf("sidecar recorded as %+v, want release %s with its build", sidecar, oldRelease)
	}
	// Every figure is the report's: the group's estimate, or the overhead.
	checked := 0
	for _, f := range r.Figures {
		var cfg analysis.LoadConfig
		for _, c := range d.Configs {
			if c.Key == f.Config {
				cfg = c
			}
		}
		g := d.Group(f.Mesh, cfg)
		if g == nil {
			t.Fatalf("figure %+v: no such group", f)
		}
		var want analysis.Estimate
		if base, ok := strings.CutPrefix(f.Metric, "added:"); ok {
			o, _ := d.Overhead(f.Mesh, cfg, analysis.Metric(base))
			want = o.Delta
		} else {
			want = g.Estimate(analysis.Metric(f.Metric))
		}
		if f.Median != want.Median || (f.Level > 0 && (f.Lo != want.Lo || f.Hi != want.Hi)) {
			t.Errorf("figure %s %s %s: %g [%g, %g], the report's %g [%g, %g]", f.Mesh, f.Config, f.Metric, f.Median, f.Lo, f.Hi, want.Median, want.Lo, want.Hi)
		}
		checked++
	}
	var added, cpu bool
	for _, f := range r.Figures {
		added = added || f.Metric == AddedMetric(analysis.P50) && f.Level > 0
		cpu = cpu || f.Metric == string(analysis.CPUPerRequest) && f.N >= 3
	}
	if !added || !cpu {
		t.Errorf("no added p50 with a 95%% interval (%v) or CPU per request over 3+ repetitions (%v)", added, cpu)
	}
	t.Logf("%d figures, each the report's", checked)
}

// TestClosedLoopRecordsNoAddedLatency: a closed loop's latency is its
// connections over its throughput (Little's law), so a mesh's latency
// less the baseline's only restates its loss of throughput, and a series
// of it would track throughput under another name. A closed-loop run
// records each mesh's throughput and its own latency, and no added
// latency.
func TestClosedLoopRecordsNoAddedLatency(t *testing.T) {
	fixtures(t)
	r := read(t, aaDirs[0])
	qps := map[string]bool{}
	for _, f := range r.Figures {
		if strings.HasPrefix(f.Metric, results.RelationAdded+":") {
			t.Errorf("closed loop: %s at %s records %s %.3g", f.Mesh, f.Config, f.Metric, f.Median)
		}
		if f.Metric == string(analysis.QPS) && f.Level > 0 {
			qps[f.Mesh] = true
		}
	}
	if len(qps) != len(r.Meshes) {
		t.Errorf("throughput with an interval recorded for %v, want each of the %d meshes", qps, len(r.Meshes))
	}
}

// TestInjectedWorkKeepsTheSeries: meshbench's injected regression (a Lua
// loop in every sidecar from one run on) is a change within a series, as a
// release is, not another mesh: the sidecar's runs form one series whose
// change point names the injected work.
func TestInjectedWorkKeepsTheSeries(t *testing.T) {
	root := t.TempDir()
	var runs []*Run
	for i := range 8 {
		o := resultstest.Options{Seed: uint64(31 + i), Start: resultstest.Start.Add(time.Duration(i) * 24 * time.Hour), Requests: 3000, EnvoyRelease: oldRelease}
		if i >= stepAt {
			o.InjectedWork = map[string]int{resultstest.Sidecar: 12000}
			o.Slowdown = map[string]float64{resultstest.Sidecar: stepSlowdown}
		}
		dir := filepath.Join(root, fmt.Sprint(i))
		if _, err := resultstest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		r, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	const want = "injected work none → 12000 Lua iterations a request"
	checked, found := 0, 0
	for _, s := range Build(runs) {
		if s.Profile != "sidecar" || s.Metric() != analysis.P50 {
			continue
		}
		checked++
		if len(s.Points) != 8 {
			t.Errorf("%s: %d points, want the 8 runs' (the injected work split the series)", s.Title(), len(s.Points))
			continue
		}
		for _, c := range Analyze(s).Changes {
			if c.At != stepAt {
				t.Errorf("%s: a change point at run %d, off the step at %d", s.Title(), c.At, stepAt)
				continue
			}
			found++
			if !slices.Contains(c.Provenance, want) {
				t.Errorf("%s: what changed %q, want %q", s.Title(), c.Provenance, want)
			}
		}
	}
	// Four runs a side is few for a permutation test: the step need
	// not stand out at every load configuration.
	if checked == 0 || found == 0 {
		t.Fatalf("the step found in %d of %d sidecar p50 series", found, checked)
	}
	t.Logf("the step found in %d of %d sidecar p50 series", found, checked)
}
