package study

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/results"
)

// boundsBase is a study with each field the bounds test changes on a line
// of its own.
const boundsBase = `apiVersion: meshbench.dev/v1alpha1
kind: Study
name: bounds
workload:
  graph: small-graph.yaml
  namespaces: 1
meshes:
- profile: baseline
- profile: sidecar
load:
  rate: 100
  duration: 10s
repetitions: 2
`

// TestParseRefusesOversizedStudies sets each size a study can set past
// its bound: each is refused with the field's line, before anything is
// planned, and within a second (the cross product of sweeps is never
// enumerated past its bound).
func TestParseRefusesOversizedStudies(t *testing.T) {
	t.Parallel()
	kube := strings.Replace(boundsBase, "name: bounds\n", "name: bounds\nplatform:\n  type: kubernetes\n  kubernetes: {image: registry.example/meshbench:v1}\n", 1)
	lines := func(prefix string, n int, f func(i int) string) string {
		var b strings.Builder
		b.WriteString(prefix)
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	// search is a capacity search study (no load.rate) with fields added
	// to its search, on line 13.
	search := func(fields string) string {
		return strings.Replace(boundsBase, "  rate: 100\n  duration: 10s\n", "  duration: 10s\n", 1) + "search: {slo: {p99: 10ms}, start_rate: 100, " + fields + "}\n"
	}
	tests := []struct {
		name, study string
		// want is the error's start: line, column and field.
		want string
	}{
		{"namespaces", strings.Replace(boundsBase, "namespaces: 1", "namespaces: 20000", 1), "6:15: workload.namespaces: 20000, more than the 10000"},
		{"replicas", strings.Replace(boundsBase, "  namespaces: 1\n", "  namespaces: 1\n  replicas: {back: 300}\n", 1), "7:20: workload.replicas.back: 300 pods behind one service, more than the 250"},
		{"pods on the lab's one app node", strings.Replace(boundsBase, "  namespaces: 1\n", "  namespaces: 200\n  replicas: {back: 2}\n", 1),
			"6:15: workload.namespaces: 600 pods (200 namespaces of 3), more than the 250 the lab's 1 app node(s) hold"},
		{"pods in a cluster", strings.Replace(kube, "  namespaces: 1\n", "  namespaces: 1000\n  replicas: {front: 200, back: 200}\n", 1),
			"9:15: workload.namespaces: 400000 pods (1000 namespaces of 400), more than the 150000"},
		{"connections", strings.Replace(boundsBase, "  rate: 100\n", "  rate: 100\n  connections: 100000\n", 1), "12:16: load.connections: 100000, more than the 64000"},
		{"rate", strings.Replace(boundsBase, "rate: 100", "rate: 1e9", 1), "11:9: load.rate: 1e+09 requests a second, more than the 1e+07"},
		{"duration", strings.Replace(boundsBase, "duration: 10s", "duration: 2h", 1), "12:13: load.duration: 2h0m0s, more than the 1h0m0s"},
		{"requests", strings.Replace(boundsBase, "duration: 10s", "requests: 10000000000", 1), "12:13: load.requests: 10000000000, more than the 1000000000"},
		{"warmup", strings.Replace(boundsBase, "  duration: 10s\n", "  duration: 10s\n  warmup: 3h\n", 1), "13:11: load.warmup: 3h0m0s, more than the 1h0m0s"},
		{"timeout", strings.Replace(boundsBase, "  duration: 10s\n", "  duration: 10s\n  timeout: 10m\n", 1), "13:12: load.timeout: 10m0s, more than the 5m0s"},
		{"repetitions", strings.Replace(boundsBase, "repetitions: 2", "repetitions: 1000", 1), "13:14: repetitions: max 1000, more than the 100"},
		{"cells", boundsBase + "sweeps:\n" +
			lines("", 2, func(i int) string {
				return lines(fmt.Sprintf("- param: %s\n  values: [", []string{"connections", "rate", "conn_requests"}[i]), 100, func(j int) string { return fmt.Sprintf("%d,", j+1) }) + "]\n"
			}), "15:1: sweeps: 40000 cells (10000 points, 2 meshes, 2 repetitions), more than the 10000"},
		{"sweep value", boundsBase + "sweeps:\n- {param: namespaces, values: [1, 20000]}\n", "15:35: sweeps[0].values[1]: namespaces: 20000, more than the 10000"},
		{"swept fan-out", boundsBase + "sweeps:\n- {param: fanout, values: [2, 5000]}\n", "15:31: sweeps[0].values[1]: fanout: one request makes 5000 calls downstream, more than the 1000"},
		{"swept payload", boundsBase + "sweeps:\n- {param: payload, values: [2000000000]}\n", "15:29: sweeps[0].values[0]: payload: 2000000000 bytes, more than the 1073741824"},
		{"workers", strings.Replace(boundsBase, "- profile: sidecar\n", "- profile: sidecar\n  workers: 5000\n", 1), "10:12: meshes[1].workers: 5000, more than the 1024"},
		{"waypoint replicas", strings.Replace(boundsBase, "- profile: sidecar\n", "- profile: ambient-waypoint\n  waypoint_replicas: 1000\n", 1), "10:22: meshes[1].waypoint_replicas: 1000, more than the 250"},
		{"lab nodes", strings.Replace(boundsBase, "name: bounds\n", lines("name: bounds\nplatform:\n  nodes:\n", 300, func(i int) string { return fmt.Sprintf("  - {name: n%d, role: app}\n", i) }), 1),
			"6:3: platform.nodes: 300 nodes, more than the lab's 250"},
		{"search trials", strings.Replace(boundsBase, "  rate: 100\n  duration: 10s\n", "  duration: 10s\n", 1) + "search: {slo: {p99: 10ms}, start_rate: 100, max_trials: 100000}\n",
			"13:57: search.max_trials: 100000, more than the 1000"},
		{"scaling", boundsBase + "scaling: {min_requests: 1000000000000}\n", "14:25: scaling.min_requests: 1000000000000, more than the 1000000000"},
		{"cluster timeout", strings.Replace(kube, "{image: registry.example/meshbench:v1}", "{image: registry.example/meshbench:v1, timeout: 48h}", 1),
			"6:63: platform.kubernetes.timeout: 48h0m0s, more than the 1h0m0s"},
		{"sample interval", strings.Replace(kube, "{image: registry.example/meshbench:v1}", "{image: registry.example/meshbench:v1, sample_interval: 10m}", 1),
			"6:71: platform.kubernetes.sample_interval: 10m0s, more than the 5m0s"},
		{"cluster nodes", strings.Replace(kube, "  kubernetes: {image: registry.example/meshbench:v1}\n", lines("  kubernetes: {image: registry.example/meshbench:v1}\n  nodes:\n", 5001, func(i int) string { return fmt.Sprintf("  - {name: n%d, role: app}\n", i) }), 1),
			"8:3: platform.nodes: 5001 nodes, more than the 5000"},
		{"search locating trials", search("trials: 5000"), "13:53: search.trials: 5000, more than the 1000"},
		{"search retries", search("retries: 500"), "13:54: search.retries: 500, more than the 100"},
		{"search budget", search("budget: 48h"), "13:53: search.budget: 48h0m0s, more than the 24h0m0s"},
		{"search trial", search("trial: 2h"), "13:52: search.trial: 2h0m0s, more than the 1h0m0s"},
		{"search start rate", strings.Replace(search("max_trials: 10"), "start_rate: 100", "start_rate: 1e9", 1), "13:40: search.start_rate: 1e+09 requests a second, more than the 1e+07"},
		{"search max rate", search("max_rate: 1e9"), "13:55: search.max_rate: 1e+09 requests a second, more than the 1e+07"},
		{"search connections", strings.Replace(search("max_trials: 10"), "start_rate: 100", "over: connections, per_connection_rate: 0.1, start_connections: 100000", 1),
			"13:92: search.start_connections: 100000, more than the 64000"},
		{"search max connections", strings.Replace(search("max_trials: 10"), "start_rate: 100", "over: connections, per_connection_rate: 0.1, start_connections: 10, max_connections: 100000", 1),
			"13:113: search.max_connections: 100000, more than the 64000"},
		{"search rate per connection", strings.Replace(search("max_trials: 10"), "start_rate: 100", "over: connections, per_connection_rate: 1e9, start_connections: 10", 1),
			"13:68: search.per_connection_rate: 1e+09 requests a second, more than the 1e+07"},
		{"scaling measure", boundsBase + "scaling: {measure: 2h}\n", "14:20: scaling.measure: 2h0m0s, more than the 1h0m0s"},
		{"scaling warmup", boundsBase + "scaling: {warmup: 2h}\n", "14:19: scaling.warmup: 2h0m0s, more than the 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := Parse([]byte(tt.study), "testdata")
			if took := time.Since(start); took > time.Second {
				t.Errorf("Parse took %s", took)
			}
			if err == nil {
				t.Fatalf("Parse accepted the study; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), "line "+tt.want) {
				t.Errorf("Parse: %v\nwant it to contain %q", err, "line "+tt.want)
			}
		})
	}
}

// TestParseRefusesAnEnormousCrossProduct: six sweeps of 100 values each
// are 10^12 points; they are refused from their counts, never listed.
func TestParseRefusesAnEnormousCrossProduct(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(boundsBase + "sweeps:\n")
	for _, p := range []string{"connections", "rate", "conn_requests", "warmup", "requests", "namespaces"} {
		fmt.Fprintf(&b, "- param: %s\n  values: [", p)
		for j := range 100 {
			if p == "warmup" {
				fmt.Fprintf(&b, "%ds,", j+1)
			} else {
				fmt.Fprintf(&b, "%d,", j+1)
			}
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	_, err := Parse([]byte(b.String()), "testdata")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Parse took %s", took)
	}
	if err == nil || !strings.Contains(err.Error(), "more than 10000 points") || !strings.Contains(err.Error(), "more than the 10000") {
		t.Fatalf("Parse: %v, want the cells refused by count", err)
	}
}

// TestLoadRunPlacesItsGraphsErrors: a results directory's graph past a
// bound is refused, naming graph.yaml, the line and the field.
func TestLoadRunPlacesItsGraphsErrors(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "results")
	interrupted(t, dir)
	graph := "name: small\nentry: front\nservices:\n- name: front\n  script:\n  - call: {service: back, count: 5000}\n- name: back\n"
	if err := os.WriteFile(filepath.Join(dir, results.GraphFile), []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadRun(dir, PlatformOverride{}, false)
	if want := filepath.Join(dir, results.GraphFile) + ":6:34: services[0].script[0].call.count: 5000, more than the 1000"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("LoadRun: %v, want %q", err, want)
	}
}
