package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/platform"
)

// fakeAPI serves a pod list and the metrics API's readings for ns-1, a
// new reading (one second later, more CPU) on each call.
func fakeAPI(t *testing.T, base time.Time) *httptest.Server {
	t.Helper()
	pod := testPod("a", true, nil, "istio-proxy")
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("700m")}
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/ns-1/pods":
			_ = json.NewEncoder(w).Encode(corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []corev1.Pod{pod}})
		case "/apis/metrics.k8s.io/v1beta1/namespaces/ns-1/pods":
			n := calls.Add(1)
			fmt.Fprintf(w, `{"kind":"PodMetricsList","items":[{"metadata":{"name":"a","namespace":"ns-1"},"timestamp":%q,"window":"1s",
				"containers":[{"name":"app","usage":{"cpu":"%dm","memory":"10Mi"}},{"name":"istio-proxy","usage":{"cpu":"50m","memory":"40Mi"}}]}]}`,
				base.Add(time.Duration(n)*time.Second).Format(time.RFC3339), 100*n)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func platformFor(t *testing.T, server string, opts Options) *kubePlatform {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", server)
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Kubeconfig, opts.Image = kc, "img"
	p, err := newPlatform(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRecorderMetricsAPI(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
	p := platformFor(t, fakeAPI(t, base).URL, Options{})
	rec := p.newRecorder([]string{"ns-1"})
	ctx := context.Background()
	for range 3 {
		rec.tick(ctx)
	}
	if rec.metricsErr != nil {
		t.Fatal(rec.metricsErr)
	}
	// The window from +1s keeps the readings at +2s and +3s, each
	// averaged over the second before it, and not +1s's, averaged over
	// the second before the window.
	series := rec.series(rec.samples, base.Add(time.Second), base.Add(3*time.Second))
	if len(series) != 2 {
		t.Fatalf("%d series, want app and sidecar: %+v", len(series), series)
	}
	byRole := map[metrics.Role]metrics.Series{}
	for _, s := range series {
		byRole[s.Component.Role] = s
	}
	app := byRole[metrics.RoleApp]
	if app.Component.CPURequestMilli != 700 || app.Component.Node != "n1" || app.Component.Container != appContainer {
		t.Errorf("app component = %+v", app.Component)
	}
	if len(app.Samples) != 2 || app.Samples[0].CPUCores != 0.2 || app.Samples[1].CPUCores != 0.3 || app.Samples[0].WorkingSet != 10<<20 {
		t.Errorf("app samples = %+v, want 0.2 and 0.3 cores, 10 MiB", app.Samples)
	}
	if sc := byRole[metrics.RoleSidecar]; sc.MeanCPU() != 0.05 || sc.PeakMemory() != 40<<20 {
		t.Errorf("sidecar = %+v", sc)
	}
}

func TestRecorderMetricsAPIMissing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	rec := platformFor(t, srv.URL, Options{}).newRecorder([]string{"ns-1"})
	rec.tick(context.Background())
	if rec.metricsErr == nil || !strings.Contains(rec.metricsErr.Error(), "metrics-server") {
		t.Errorf("metricsErr = %v, want one naming metrics-server and Prometheus", rec.metricsErr)
	}
}

// TestPrometheusSamples checks the exact window: CPU computed from the
// stored counter between consecutive scrapes, only for intervals wholly
// inside the window (not the warm-up's), memory from the scrape within
// each interval, and a missing scrape or a counter reset left as a gap,
// never a zero.
func TestPrometheusSamples(t *testing.T) {
	t.Parallel()
	start := time.Unix(1700000000, 0).UTC()
	end := start.Add(20 * time.Second)
	var queries []string
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" || r.URL.Query().Get("time") != "1700000020.000" {
			http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		q := r.URL.Query().Get("query")
		queries = append(queries, q)
		// Scrapes every 5 s from 10 s before the window: the counter
		// (CPU-seconds) resets at +15 s; memory misses its +10 s scrape.
		values := `[[1699999990,"100"],[1699999995,"105"],[1700000000,"106"],[1700000005,"107"],[1700000010,"109.5"],[1700000015,"0.5"],[1700000020,"1.5"]]`
		if strings.Contains(q, "working_set") {
			values = `[[1699999995,"9"],[1700000000,"9"],[1700000005,"1048576"],[1700000015,"3145728"],[1700000020,"4194304"]]`
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"namespace":"ns-1","pod":"a","container":"app"},"values":%s}]}}`, values)
	}))
	t.Cleanup(prom.Close)
	p := &kubePlatform{opts: Options{Prometheus: prom.URL + "/", SampleInterval: 5 * time.Second}}
	src, err := p.prometheusSamples(context.Background(), []string{"ns-1", "istio-system"}, start, end)
	if err != nil {
		t.Fatal(err)
	}
	rec := p.newRecorder(nil)
	rec.comps[componentKey("ns-1", "a", "app")] = metrics.Component{Role: metrics.RoleApp}
	got := rec.series(src, start, end)[0]
	want := []metrics.Sample{
		{Time: start.Add(5 * time.Second), CPUCores: 0.2, WorkingSet: 1 << 20},
		{Time: end, CPUCores: 0.2, WorkingSet: 4 << 20},
	}
	if len(got.Samples) != len(want) {
		t.Fatalf("samples = %+v, want %+v", got.Samples, want)
	}
	for i := range want {
		if g := got.Samples[i]; !g.Time.Equal(want[i].Time) || math.Abs(g.CPUCores-want[i].CPUCores) > 1e-9 || g.WorkingSet != want[i].WorkingSet {
			t.Errorf("sample %d = %+v, want %+v", i, g, want[i])
		}
	}
	// +5 s to +20 s has no reading: +10 s lacked memory, +15 s followed
	// a counter reset.
	if len(got.Gaps) != 1 || !got.Gaps[0].From.Equal(start.Add(5*time.Second)) || !got.Gaps[0].To.Equal(end) {
		t.Errorf("gaps = %+v, want +5s..+20s", got.Gaps)
	}
	if len(queries) != 2 || queries[0] != `container_cpu_usage_seconds_total{namespace=~"ns-1|istio-system",container!="",container!="POD"}[25s]` {
		t.Errorf("queries = %q", queries)
	}
}

func TestPrometheusError(t *testing.T) {
	t.Parallel()
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
	}))
	t.Cleanup(prom.Close)
	p := &kubePlatform{opts: Options{Prometheus: prom.URL, SampleInterval: time.Second}}
	_, err := p.prometheusSamples(context.Background(), []string{"ns-1"}, time.Now(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("err = %v, want Prometheus's message", err)
	}
}

// TestMeasureChecksResourcesFirst: without a metrics API or Prometheus,
// Measure must fail before it starts any load.
func TestMeasureChecksResourcesFirst(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	p := platformFor(t, srv.URL, Options{})
	p.workload, p.namespaces = &platform.Workload{Graph: testGraph(t, "tiered"), Namespaces: 1}, []string{"ns-1"}
	_, err := p.Measure(context.Background(), infra.LoadSpec{Options: load.Options{Rate: 1, Duration: time.Second, Connections: 1}})
	if err == nil || !strings.Contains(err.Error(), "metrics-server") {
		t.Errorf("Measure = %v, want the metrics API's absence named", err)
	}
	if writes.Load() != 0 {
		t.Errorf("Measure wrote %d times to the API before failing", writes.Load())
	}
}

func TestWithDigest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ image, id, want string }{
		{"ghcr.io/you/meshbench:v1", "ghcr.io/you/meshbench@sha256:abc", "ghcr.io/you/meshbench:v1@sha256:abc"},
		{"envoyproxy/envoy:v1.34.1", "docker.io/envoyproxy/envoy@sha256:def", "envoyproxy/envoy:v1.34.1@sha256:def"},
		{"meshbench:dev", "sha256:123", "meshbench:dev (image sha256:123)"},
		{"meshbench:dev", "", "meshbench:dev"}, // not pulled yet, or kwok
	} {
		if got := withDigest(tc.image, tc.id); got != tc.want {
			t.Errorf("withDigest(%q, %q) = %q, want %q", tc.image, tc.id, got, tc.want)
		}
	}
}
