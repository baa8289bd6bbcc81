package cost

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/meshbench/meshbench/internal/mesh"
)

func TestDefaultCatalog(t *testing.T) {
	t.Parallel()
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range c.Machines {
		if seen[m.Name] {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = true
		if err := m.validate(); err != nil {
			t.Error(err)
		}
	}
	for _, name := range []string{
		"n2-standard-2", "n2-standard-4", "n2-standard-8", "n2-standard-16", "n2-standard-32", "n2-highmem-8", "n2-highcpu-8",
		"m5.large", "m5.2xlarge", "c5.2xlarge", "Standard_D8s_v5",
	} {
		if !seen[name] {
			t.Errorf("catalog lacks %s", name)
		}
	}
	// The Istio blog's GCP monthly prices, which the catalog's
	// us-central1 list prices should round to.
	for name, usd := range map[string]float64{"n2-standard-4": 141, "n2-highmem-4": 191, "n2-highmem-2": 95} {
		m, err := c.Machine(name)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m.MonthlyUSD-usd) >= 1 {
			t.Errorf("%s costs $%.2f a month; the blog gives $%v", name, m.MonthlyUSD, usd)
		}
	}
}

func TestNodeAllocatable(t *testing.T) {
	t.Parallel()
	c, err := LoadCatalog("")
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Machine("n2-standard-8")
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.NodeAllocatable()
	if err != nil {
		t.Fatal(err)
	}
	// 8 cores keep 90m. 32 GiB (32768 MiB) keep 1000 + 800 + 800 MiB for
	// the first 16 GB, 6% of the 16768 MiB above (1006.08 MiB) and 100 MiB
	// for eviction.
	wantMem := 32*GiB - 2700*MiB - 16768*MiB*6/100
	if a.MilliCPU != 7910 || a.Bytes != wantMem {
		t.Fatalf("allocatable = %d m, %d bytes; want 7910 m, %d bytes", a.MilliCPU, a.Bytes, wantMem)
	}
}

func TestResourcesJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want Resources
		out  string
	}{
		{"quantities", `{"cpu": "700m", "memory": "500Mi"}`, Resources{700, 500 * MiB}, `{"cpu":"700m","memory":"500Mi"}`},
		{"bare numbers", `{"cpu": 2, "memory": 1073741824}`, Resources{2000, GiB}, `{"cpu":"2","memory":"1Gi"}`},
		{"odd bytes", `{"cpu": "0.5", "memory": "1000"}`, Resources{500, 1000}, `{"cpu":"500m","memory":"1000"}`},
	}
	for _, tc := range tests {
		var r Resources
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if r != tc.want || string(out) != tc.out {
			t.Errorf("%s: read %+v, wrote %s; want %+v and %s", tc.name, r, out, tc.want, tc.out)
		}
	}
	var r Resources
	for _, bad := range []string{`{"cpu": "lots"}`, `{"cpus": "1"}`, `{"cpu": true}`} {
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestFootprints(t *testing.T) {
	t.Parallel()
	fs, err := LoadFootprints("")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs.Meshes {
		if err := f.validate(); err != nil {
			t.Error(err)
		}
	}
	sel, err := fs.Select([]string{"baseline", "ambient"})
	if err != nil {
		t.Fatal(err)
	}
	amb := sel[1]
	if sel[0].Name != mesh.ProfileBaseline || len(amb.PerNode) != 2 || amb.PerNode[0].Requests != (Resources{200, 512 * MiB}) || amb.Sidecar != nil {
		t.Fatalf("selected %+v", sel)
	}
	if got := sel[0].Lines(); len(got) != 1 || got[0] != "adds nothing" {
		t.Errorf("baseline lines = %q", got)
	}
}

// TestRegistryFootprints checks that every registry footprint is one
// the cost model accepts and that each profile's is listed under its own
// name or the name of the profile it shares it with.
func TestRegistryFootprints(t *testing.T) {
	t.Parallel()
	fs, err := LoadFootprints("")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs.Meshes {
		if err := f.validate(); err != nil {
			t.Error(err)
		}
	}
	for _, name := range mesh.ProfileNames("") {
		p, _ := mesh.LookupProfile(name)
		if p.Footprint == nil {
			continue
		}
		got, err := fs.Select([]string{p.Footprint.Name})
		if err != nil {
			t.Errorf("profile %s: %v", name, err)
			continue
		}
		if want := FromMesh(*p.Footprint); !reflect.DeepEqual(got[0], want) {
			t.Errorf("profile %s: listed %+v, registry %+v", name, got[0], want)
		}
	}
}
