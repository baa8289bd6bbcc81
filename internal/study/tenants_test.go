package study

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
)

// tenantStudy is a 50-tenant study scaled by tenants: one and two loaded.
func tenantStudy(deploy string) string {
	return `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: tenants
workload: {graph: small-graph.yaml, namespaces: 50}
meshes: [{profile: baseline}, {profile: sidecar}]
load: {rate: 450, connections: 100, duration: 600s, warmup: 30s, http2: true, generators: per-namespace}
repetitions: 1
scaling: {fraction: 0.5, measure: 20s, warmup: 5s, tenants: [1, 2], deploy: ` + deploy + `}
published:
- {metric: "added:p50", mesh: sidecar, value: 4.81, source: "test table"}
`
}

func TestRunTenantScaling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, deploy string
		sidecarCap   float64
		wantRate     float64
		lowered      bool
		wantDeploys  []string // the namespaces each deployment had
		wantTenants  map[string]int
	}{
		// The sidecar serves 400 req/s with one tenant: two tenants at half
		// of that may offer 200 in all, so each runs at 100, not 450.
		{name: "lowered, loaded deployed", deploy: "loaded", sidecarCap: 400, wantRate: 100, lowered: true,
			wantDeploys: []string{"deploy ns=1", "deploy ns=2"}, wantTenants: map[string]int{"1": 1, "2": 2}},
		// At 4000 req/s two tenants at 450 stay under half: the study's
		// rate holds. With every tenant deployed, one deployment serves both
		// counts and the generators load the first k.
		{name: "study rate, all deployed", deploy: "all", sidecarCap: 4000, wantRate: 450,
			wantDeploys: []string{"deploy ns=50"}, wantTenants: map[string]int{"1": 1, "2": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.rates["baseline"] = 10000
			f.rates["sidecar"] = tc.sidecarCap
			dir := t.TempDir()
			var progress bytes.Buffer
			ix := run(t, runOptions(t, tenantStudy(tc.deploy), f, dir, &progress))
			sc := ix.Provenance.Scaling
			if sc == nil || sc.Mode != results.ScaleTenants || sc.StudyTenants != 50 || sc.TenantRate != tc.wantRate ||
				sc.RateLowered != tc.lowered || sc.PublishedRate != 450 || sc.Reference != "sidecar" || sc.Deployed != tc.deploy ||
				len(sc.Tenants) != 2 || sc.Rate != 2*tc.wantRate {
				t.Fatalf("scaling %+v", sc)
			}
			if tc.lowered != strings.Contains(sc.Note, "lowered from the study's 450") {
				t.Errorf("note %q: lowered %v", sc.Note, tc.lowered)
			}
			if len(ix.Provenance.Published) != 1 || ix.Provenance.Published[0].Value != 4.81 {
				t.Errorf("published figures not recorded: %+v", ix.Provenance.Published)
			}
			var deploys []string
			for _, c := range f.calls {
				if strings.HasPrefix(c, "deploy") {
					deploys = append(deploys, strings.TrimSuffix(c, " replicas=map[]"))
				}
			}
			if strings.Join(deploys, "|") != strings.Join(tc.wantDeploys, "|") {
				t.Errorf("deployments %q, want %q", deploys, tc.wantDeploys)
			}
			// Calibration loads one tenant per mesh; then 2 meshes x 2 counts.
			if n := f.count("generators 1"); n != 2+2 {
				t.Errorf("%d measurements loaded one tenant, want 4 (2 calibrations, 2 cells)", n)
			}
			if n := f.count("generators 2"); n != 2 {
				t.Errorf("%d measurements loaded two tenants, want 2", n)
			}
			if len(ix.Cells) != 4 {
				t.Fatalf("%d cells, want 4", len(ix.Cells))
			}
			for _, s := range ix.Cells {
				c, err := results.ReadCell(dir, s)
				if err != nil {
					t.Fatal(err)
				}
				k := s.Params[results.TenantsParam]
				o := c.Load.Options
				if o.Rate != tc.wantRate || o.Connections != 100 || !o.HTTP2 || o.Duration.Seconds() != 20 {
					t.Errorf("cell %s load %+v: want each tenant at %g req/s with the study's 100 HTTP/2 connections", s.ID, o, tc.wantRate)
				}
				wantLoaded := 0 // all the deployed namespaces
				if tc.deploy == DeployAll {
					wantLoaded = tc.wantTenants[k]
				}
				if c.Load.Tenants != wantLoaded {
					t.Errorf("cell %s loads %d tenants, want %d", s.ID, c.Load.Tenants, wantLoaded)
				}
			}
		})
	}
}

func TestValidateTenantScaling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, from, to, want string }{
		{"count above namespaces", "tenants: [1, 2]", "tenants: [1, 51]", "scaling.tenants[1]"},
		{"repeated count", "tenants: [1, 2]", "tenants: [2, 2]", "scaling.tenants[1]"},
		{"unknown deploy", "deploy: loaded", "deploy: some", "scaling.deploy"},
		{"one generator", "generators: per-namespace", "generators: one", "scaling.tenants"},
		{"unknown metric", `metric: "added:p50"`, `metric: "added:p42"`, "published[0].metric"},
		{"unknown mesh", "mesh: sidecar, value", "mesh: linkerd, value", "published[0].mesh"},
		{"no source", `source: "test table"`, `source: ""`, "published[0].source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(tenantStudy("loaded"), tc.from, tc.to, 1)
			if src == tenantStudy("loaded") {
				t.Fatalf("%q not in the study", tc.from)
			}
			_, err := Parse([]byte(src), "testdata")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestCPUWorkOverride(t *testing.T) {
	t.Parallel()
	s, _, err := Preset("livewyer-bookinfo", PlatformOverride{})
	if err != nil {
		t.Fatal(err)
	}
	for svc, want := range map[string]string{"productpage": "29ms", "details": "3ms", "reviews": "8ms", "ratings": "6ms"} {
		for _, v := range []string{"", "v1", "v2", "v3"} {
			b, err := s.Graph.Behavior(svc, v)
			if err != nil {
				continue // not every service has these versions
			}
			if b.CPUWork.String() != want {
				t.Errorf("%s %s burns %s per request, want %s", svc, v, b.CPUWork, want)
			}
		}
	}
}

// Calibration runs a closed-loop study at its own connections when they
// are fewer than the calibration's, and a tenant-scaled one with the
// smallest tenant count loaded.
func TestCalibrationCell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		preset            string
		conns, namespaces int
		tenants           string
		seconds           float64
	}{
		// Calibrating the app's cost measures for the scaling's 20 s.
		{"livewyer-bookinfo", 32, 1, "", 16},
		{"solo-tiered", 64, 1, "1", 5},
	} {
		s, _, err := Preset(tc.preset, PlatformOverride{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.calibrationCell(s.Meshes[0])
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Load.Options; o.Warmup != calibrationWarmup || o.WarmupMax != calibrationWarmupMax {
			// The capacity of a cold proxy scales the study to nothing.
			t.Errorf("%s: calibration warms up for %s to %s; want %s, then until its throughput settles, up to %s",
				tc.preset, o.Warmup, o.WarmupMax, calibrationWarmup, calibrationWarmupMax)
		}
		if o := c.Load.Options; o.Connections != tc.conns || o.Rate != 0 || c.Namespaces != tc.namespaces || c.Params[results.TenantsParam] != tc.tenants || o.Duration.Seconds() != tc.seconds {
			t.Errorf("%s: calibration %d connections at rate %g, %d namespaces, tenants %q, %s; want %d, closed loop, %d, %q, %gs",
				tc.preset, o.Connections, o.Rate, c.Namespaces, c.Params[results.TenantsParam], o.Duration, tc.conns, tc.namespaces, tc.tenants, tc.seconds)
		}
	}
}

// TestRunTenantExtrapolation runs a tenant-scaled study on the fake, whose
// app uses 0.1 core idle plus 1 core per 1000 req/s, and reads the
// results as the report does: latency stays per tenant, the app's CPU is
// extrapolated to the study's 50 tenants along the line through the two
// counts measured, and its fixed idle part makes the per-tenant figures
// disagree by more than the linearity tolerance, which is flagged.
func TestRunTenantExtrapolation(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.rates["baseline"], f.rates["sidecar"] = 10000, 400 // each tenant at 100 req/s
	f.capacity["baseline"], f.capacity["sidecar"] = 10000, 400
	dir := t.TempDir()
	run(t, runOptions(t, tenantStudy("loaded"), f, dir, nil))
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var app *analysis.Extrapolation
	for _, e := range d.Extrapolations() {
		if e.Mesh == "sidecar" && e.Figure == "app CPU" {
			app = &e
		}
		if strings.Contains(e.Figure, "p50") || strings.Contains(e.Figure, "latency") {
			t.Errorf("latency extrapolated: %+v", e)
		}
	}
	if app == nil {
		t.Fatalf("the app's CPU was not extrapolated: %+v", d.Extrapolations())
	}
	// 0.2 cores with one tenant at 100 req/s, 0.3 with two: 0.1 more per
	// tenant, 5.1 at 50; per tenant 0.2 against 0.15, 25% apart.
	if app.K1 != 1 || app.K2 != 2 || app.N != 50 || math.Abs(app.At1-0.2) > 1e-9 || math.Abs(app.At2-0.3) > 1e-9 ||
		math.Abs(app.AtN-5.1) > 1e-9 || app.Linear() || app.Fixed() {
		t.Errorf("app CPU %+v (disagreement %g): want 0.2 and 0.3 at 1 and 2 tenants, 5.1 at 50, flagged as not proportional", *app, app.Disagreement())
	}
	// The published latency figure compares at one tenant, as measured.
	for _, fd := range d.Fidelities() {
		if fd.Config.Params[results.TenantsParam] != "1" {
			t.Errorf("published %s compared at %v, want tenants=1", fd.Published.Metric, fd.Config.Params)
		}
	}
}
