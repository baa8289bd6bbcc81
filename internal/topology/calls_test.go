package topology

import (
	"math"
	"testing"
)

// TestCallsPerRequest counts the calls one request makes: tiered's five
// server hits (tier-1, both tier-2s, tier-3 from each), bookinfo's
// productpage, details, reviews and ratings from two of reviews' three
// versions, and a graph whose call repeats, is sometimes skipped and
// goes to a service with versions of unequal replicas.
func TestCallsPerRequest(t *testing.T) {
	t.Parallel()
	custom, err := Parse([]byte(`
name: custom
entry: front
services:
- name: front
  script:
  - call: {service: back, count: 2}
  - call: {service: side, probability: 0.5}
- name: back
  versions:
  - {name: v1, replicas: 3}
  - name: v2
    script:
    - call: side
- name: side
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want float64
	}{{"tiered", 5}, {"bookinfo", 1 + 1 + 1 + 2.0/3}, {"custom", 1 + 2*(1+0.25) + 0.5}} {
		g := custom
		if tc.name != "custom" {
			if g, err = Builtin(tc.name); err != nil {
				t.Fatal(err)
			}
		}
		if got := g.CallsPerRequest(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v calls per request, want %v", tc.name, got, tc.want)
		}
	}
}
