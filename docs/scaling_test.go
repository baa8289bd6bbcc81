package docs_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/study"
)

// scalingSentence is results.md's account of a scaled load: what the
// factor F multiplies, and what it leaves as the study wrote it.
var scalingSentence = regexp.MustCompile(`- (open-loop rates[^;]*) are multiplied by F; ([^:]*) are not changed`)

// TestResultsSaysWhatScalingScales fails when results.md's list of what a
// scaled load multiplies and what it keeps disagrees with the plan: a
// study planned at --scale 0.1 against the same study unscaled, for an
// open and a closed loop (issue 44: results.md said connections stay
// as written while the report said they were scaled).
func TestResultsSaysWhatScalingScales(t *testing.T) {
	s, err := study.Parse([]byte(`apiVersion: meshbench.dev/v1alpha1
kind: Study
name: scaled
workload: {graph: tiered, namespaces: 2, replicas: {tier-1-app-a: 2}}
meshes: [baseline]
load: {connections: 100, requests: 10000}
sweeps:
- {param: rate, values: [0, 1000]}
repetitions: 1
`), "")
	if err != nil {
		t.Fatal(err)
	}
	written, err := study.NewPlan(s, s.ScalingFor(0))
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := study.NewPlan(s, s.ScalingFor(0.1))
	if err != nil {
		t.Fatal(err)
	}
	if len(written.Cells) != 2 || len(scaled.Cells) != 2 {
		t.Fatalf("%d and %d cells, want 2 each", len(written.Cells), len(scaled.Cells))
	}
	changed := map[string]bool{}
	for i, w := range written.Cells {
		sc, wo, so := scaled.Cells[i], w.Load.Options, scaled.Cells[i].Load.Options
		if wo.Rate > 0 {
			changed["open-loop rates"] = so.Rate != wo.Rate
			changed["their connections"] = so.Connections != wo.Connections
		} else {
			changed["a closed loop's connections"] = so.Connections != wo.Connections
		}
		changed["request counts"] = changed["request counts"] || so.Requests != wo.Requests
		changed["namespaces"] = changed["namespaces"] || sc.Namespaces != w.Namespaces
		changed["replicas"] = changed["replicas"] || sc.Replicas["tier-1-app-a"] != w.Replicas["tier-1-app-a"]
	}
	b, err := os.ReadFile("results.md")
	if err != nil {
		t.Fatal(err)
	}
	m := scalingSentence.FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("results.md has no sentence \"- open-loop rates ... are multiplied by F; ... are not changed\"")
	}
	multiplied, kept := m[1], m[2]
	for what, ch := range changed {
		in, not := kept, multiplied
		if ch {
			in, not = multiplied, kept
		}
		if !strings.Contains(in, what) || strings.Contains(not, what) {
			t.Errorf("results.md: %q: scaling by 0.1 changes it: %t, but the doc lists it under %q, not %q", what, ch, not, in)
		}
	}
}
