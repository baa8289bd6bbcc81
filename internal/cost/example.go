package cost

import (
	"fmt"
	"sort"
	"strings"
)

// Example is a built-in set of inputs that reproduces a published study's
// cost figures.
type Example struct {
	Name       string
	Study      string
	Workload   string
	Namespaces int
	Node       string
	Meshes     []string
	// Published maps a mesh to the study's own increase over the baseline,
	// in percent.
	Published map[string]float64
	// Notes are the study's statements the comparison rests on.
	Notes []string
}

var examples = []Example{{
	Name:       "solo-2024",
	Study:      `Solo.io, "Istio in Ambient Mode - Doing More for Less!" (2024), https://github.com/solo-io/service-mesh-for-less-blog`,
	Workload:   "tiered",
	Namespaces: 50,
	Node:       "n2-standard-8",
	Meshes:     []string{"sidecar", "ambient", "ambient-waypoint", "linkerd"},
	Published:  map[string]float64{"sidecar": 36, "ambient": 5, "ambient-waypoint": 15},
	Notes: []string{
		"the study's nodes are GKE n2-standard-8; its baseline costs $5475 a month",
		"its published increases come from deploying on a real cluster (Kubernetes' scheduler and autoscaler, GKE's own system pods), not from an optimal packing",
		"it gives Linkerd and the sidecar together as \"up to 36%\"; Linkerd has no figure of its own",
	},
}}

// LookupExample returns the named built-in example.
func LookupExample(name string) (Example, error) {
	var names []string
	for _, e := range examples {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	sort.Strings(names)
	return Example{}, fmt.Errorf("unknown example %q; examples are %s", name, strings.Join(names, ", "))
}

// published returns the example's figure for a mesh, if it has one.
func (e Example) published(mesh string) *float64 {
	v, ok := e.Published[mesh]
	if !ok {
		return nil
	}
	return &v
}

// summary is one line listing the published increases.
func (e Example) summary() string {
	var parts []string
	for _, m := range e.Meshes {
		if v := e.published(m); v != nil {
			parts = append(parts, fmt.Sprintf("%s +%g%%", m, *v))
		}
	}
	return "published increases over baseline: " + strings.Join(parts, ", ")
}
