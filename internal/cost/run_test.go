package cost

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (rerun with -update after checking):\n%s", path, got)
	}
}

func TestRunExampleGolden(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		if err := Run(&out, Options{Example: "solo-2024", Output: format}); err != nil {
			t.Fatal(err)
		}
		golden(t, "solo-2024."+map[string]string{"text": "txt", "json": "json"}[format], out.Bytes())
	}
}

func TestRunJSONRows(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := Options{Workload: "tiered", Namespaces: 50, PodCPU: "700m", PodMemory: "500Mi", Node: "n2-standard-8", Meshes: []string{"sidecar", "ambient"}, Output: "json"}
	if err := Run(&out, o); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want baseline, sidecar, ambient", len(rows))
	}
	for _, key := range []string{"mesh", "nodes", "ideal_nodes", "monthly_cost", "increase_pct"} {
		if _, ok := rows[1][key]; !ok {
			t.Errorf("row has no %q: %v", key, rows[1])
		}
	}
	if rows[1]["mesh"] != "sidecar" || rows[1]["nodes"] != 26.0 || rows[2]["nodes"] != 20.0 {
		t.Errorf("rows = %v", rows)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunOverrides(t *testing.T) {
	t.Parallel()
	catalog := writeFile(t, "catalog.yaml", `
prices_note: my negotiated prices
machines:
- {name: n2-standard-8, provider: gke, vcpu: 8, memory_gib: 32, max_pods: 110, monthly_usd: 200}
- {name: measured, provider: gke, vcpu: 8, memory_gib: 32, max_pods: 110, monthly_usd: 100, allocatable: {cpu: 7000m, memory: 28Gi}}
`)
	footprints := writeFile(t, "footprints.yaml", `
meshes:
- name: sidecar
  description: leaner sidecar
  sidecar: {name: istio-proxy, requests: {cpu: 100m, memory: 128Mi}}
- name: mine
  per_node: [{name: agent, requests: {cpu: 1, memory: 1Gi}}]
`)
	tests := []struct {
		name string
		o    Options
		want map[string]int // mesh -> nodes
		cost float64        // baseline monthly cost
	}{
		// A price override changes dollars, not nodes.
		{name: "price", o: Options{Example: "solo-2024", CatalogFile: catalog, Meshes: []string{"baseline"}}, want: map[string]int{"baseline": 19}, cost: 19 * 200},
		// 7000m allocatable: 10 pods of 700m a node.
		{name: "allocatable", o: Options{Example: "solo-2024", CatalogFile: catalog, Node: "measured", Meshes: []string{"baseline"}}, want: map[string]int{"baseline": 20}, cost: 20 * 100},
		// 800m pods: 9 a node, 23 nodes; 1 core per node leaves 6910m: 9 pods.
		{name: "footprints", o: Options{Example: "solo-2024", FootprintsFile: footprints, Meshes: []string{"sidecar", "mine"}}, want: map[string]int{"baseline": 19, "sidecar": 23, "mine": 23}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat, err := LoadCatalog(tc.o.CatalogFile)
			if err != nil {
				t.Fatal(err)
			}
			e, err := EstimateAllocation(tc.o, cat)
			if err != nil {
				t.Fatal(err)
			}
			if len(e.Rows) != len(tc.want) {
				t.Fatalf("rows = %+v, want %v", e.Rows, tc.want)
			}
			for _, r := range e.Rows {
				if r.Nodes != tc.want[r.Mesh] {
					t.Errorf("%s: %d nodes, want %d", r.Mesh, r.Nodes, tc.want[r.Mesh])
				}
			}
			if tc.cost != 0 && e.Rows[0].MonthlyCost != tc.cost {
				t.Errorf("baseline costs %v, want %v", e.Rows[0].MonthlyCost, tc.cost)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	badCatalog := writeFile(t, "bad.yaml", "machines:\n- {name: x, provider: gke, vcpu: 2, memory_gib: 8, price: 3}\n")
	badFootprints := writeFile(t, "bad-fp.yaml", "meshes:\n- {name: baseline}\n")
	empty := t.TempDir()
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no workload", Options{}, "no workload"},
		{"bad output", Options{Example: "solo-2024", Output: "yaml"}, "want text or json"},
		{"unknown example", Options{Example: "nope"}, "unknown example"},
		{"unknown mesh", Options{Example: "solo-2024", Meshes: []string{"consul"}}, "unknown mesh"},
		{"unknown node", Options{Example: "solo-2024", Node: "z9-huge"}, "unknown machine type"},
		{"bad quantity", Options{Workload: "tiered", PodCPU: "lots"}, "pod requests"},
		{"unknown catalog field", Options{Example: "solo-2024", CatalogFile: badCatalog}, "unknown field"},
		{"reserved mesh name", Options{Example: "solo-2024", FootprintsFile: badFootprints}, "reserved"},
		{"missing file", Options{Example: "solo-2024", CatalogFile: "/nonexistent/catalog.yaml"}, "no such file"},
		{"not a results directory", Options{ResultsDir: empty}, "not a results directory: no study.json"},
		{"results with an example", Options{ResultsDir: empty, Example: "solo-2024"}, "--results prices what the study recorded; drop --example"},
		{"results with a usage file", Options{ResultsDir: empty, UsageFile: "u.yaml"}, "drop --usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Run(&bytes.Buffer{}, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRunConsumption(t *testing.T) {
	t.Parallel()
	usage := writeFile(t, "usage.yaml", `
- mesh: sidecar
  request_rate_rps: 22500
  components:
  - {role: sidecar, instances: 200, cpu_cores: 9, memory_bytes: 10737418240}
- mesh: ambient
  request_rate_rps: 22500
  nodes: 20
  components:
  - {role: node-proxy, instances: 20, cpu_cores: 4.5, memory_bytes: 1073741824}
`)
	var out bytes.Buffer
	if err := Run(&out, Options{UsageFile: usage, ProjectRPS: 45000, ProjectNodes: 40, Output: "json"}); err != nil {
		t.Fatal(err)
	}
	var rows []ConsumptionRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	// The catalog's n2 list prices, by the blog's pairs:
	// ($141.79 - $95.64) / 2 vCPU and ($191.28 - $141.79) / 16 GB.
	cpu, gb := (141.79-95.64)/2, (191.28-141.79)/16
	if len(rows) != 2 || !near(rows[0].MonthlyCost, 9*cpu+10*gb) || !near(rows[0].CPUPer1000RPS, 0.4) {
		t.Fatalf("rows = %+v, want sidecar at 9 cores and 10 GB, 0.4 cores per 1000 RPS", rows)
	}
	if p := rows[1].Projected; p == nil || !near(p.CPUCores, 9) || !near(p.MemoryGB, 2) {
		t.Fatalf("ambient projected = %+v, want 9 cores and 2 GB at twice the rate and nodes", p)
	}

	out.Reset()
	if err := Run(&out, Options{UsageFile: usage, VCPUMonth: 20, GBMonth: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "$20.00 per vCPU-month, $2.00 per GB-month (given)") || !strings.Contains(out.String(), "$200.00") {
		t.Fatalf("table:\n%s", out.String())
	}
	if err := Run(&out, Options{UsageFile: usage, VCPUMonth: 20}); err == nil {
		t.Fatal("only --vcpu-month: no error")
	}
	if err := Run(&out, Options{UsageFile: usage, CPUPair: []string{"n2-standard-4"}}); err == nil {
		t.Fatal("one-machine pair: no error")
	}
}
