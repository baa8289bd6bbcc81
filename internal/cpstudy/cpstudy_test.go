package cpstudy

import (
	"math"
	"testing"
)

func TestParseHistogramsSumsLabels(t *testing.T) {
	text := `# HELP pilot_xds_push_time Total time in seconds Pilot takes to push lds, rds, cds and eds.
# TYPE pilot_xds_push_time histogram
pilot_xds_push_time_bucket{type="cds",le="0.01"} 2
pilot_xds_push_time_bucket{type="cds",le="0.1"} 4
pilot_xds_push_time_bucket{type="cds",le="+Inf"} 4
pilot_xds_push_time_sum{type="cds"} 0.2
pilot_xds_push_time_count{type="cds"} 4
pilot_xds_push_time_bucket{type="eds",le="0.01"} 6
pilot_xds_push_time_bucket{type="eds",le="0.1"} 6
pilot_xds_push_time_bucket{type="eds",le="+Inf"} 6
pilot_xds_push_time_sum{type="eds"} 0.01
pilot_xds_push_time_count{type="eds"} 6
pilot_xds_pushes{type="cds"} 9
`
	h := parseHistograms(text, istiodHistograms)["pilot_xds_push_time"]
	if h.Count != 10 || math.Abs(h.Sum-0.21) > 1e-9 {
		t.Fatalf("count %g sum %g, want 10 and 0.21", h.Count, h.Sum)
	}
	if len(h.Buckets) != 3 || h.Buckets[0].Count != 8 || h.Buckets[1].Count != 10 {
		t.Fatalf("buckets %+v", h.Buckets)
	}
	// Rank 5 of 10 lies in the first bucket: 5/8 of the way to 0.01.
	if q := h.Quantile(0.5); math.Abs(q-0.00625) > 1e-9 {
		t.Errorf("p50 %g, want 0.00625", q)
	}
	// Rank 9.9 lies in the second bucket: 0.01 + 0.09*(1.9/2).
	if q := h.Quantile(0.99); math.Abs(q-0.0955) > 1e-9 {
		t.Errorf("p99 %g, want 0.0955", q)
	}
	if _, ok := parseHistograms(text, istiodHistograms)["pilot_xds_config_size_bytes"]; ok {
		t.Error("a histogram missing from the text was reported")
	}
}

func TestLayoutSpreadsPodsOverTiersAndNodes(t *testing.T) {
	for _, pods := range []int{100, 1000, 5000} {
		l := newLayout(pods)
		if len(l.PodList) != pods {
			t.Errorf("%d pods: layout has %d", pods, len(l.PodList))
		}
		if want := max(2, pods/podsPerNamespace); len(l.Namespaces) != want {
			t.Errorf("%d pods: %d namespaces, want %d", pods, len(l.Namespaces), want)
		}
		perNode := map[string]int{}
		perTier := map[int]int{}
		for _, p := range l.PodList {
			perNode[p.Node]++
			perTier[p.Tier]++
		}
		for n, c := range perNode {
			if c > podsPerNode {
				t.Errorf("%d pods: node %s holds %d, more than %d", pods, n, c, podsPerNode)
			}
		}
		for tier := range l.Namespaces {
			if perTier[tier] == 0 {
				t.Errorf("%d pods: tier %d is empty", pods, tier)
			}
		}
	}
}
