package cost

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadCatalog feeds the machine catalogue loader arbitrary user
// catalogue files, seeded with the built-in one: it must never panic,
// and every machine type it accepts must give a node's allocatable
// resources.
func FuzzLoadCatalog(f *testing.F) {
	f.Add(defaultCatalogYAML)
	f.Add([]byte("machines:\n- {name: tiny, provider: gke, vcpu: 1, memory_gib: 0.5, max_pods: 8, monthly_usd: 5}\n"))
	path := filepath.Join(f.TempDir(), "catalog.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCatalog(path)
		if err != nil {
			return
		}
		for _, m := range c.Machines {
			if _, err := m.NodeAllocatable(); err != nil {
				t.Fatalf("accepted machine %+v, but: %v", m, err)
			}
		}
	})
}
