package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/results"
)

func TestScalingText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		sc      *results.Scaling
		want    []string // in the text
		notWant []string
		rows    [][]string // the capacities table; nil for none
	}{
		{name: "unscaled", want: []string{"unscaled"}},
		{
			name: "calibrated on the slowest mesh, open loop",
			sc: &results.Scaling{Mode: "calibrated", Fraction: 0.3, Factor: 0.0006667, Rate: 75, PublishedRate: 112500,
				BaselineCapacity: 1000, Reference: "sidecar",
				Capacities: map[string]float64{"baseline": 1000, "ambient": 800, "sidecar": 250},
				Note:       "open-loop rates scaled to offer 30% of the capacity of the slowest mesh, sidecar (250.0 req/s)"},
			want: []string{"Calibrated on the slowest mesh, sidecar (250 req/s)", "open-loop rates offered 30.0% of it",
				"the lab's rate was 75.0 req/s", "the published rate 112500 req/s", "factor 0.0007 of the published load",
				"Open-loop rates scaled to offer 30%"},
			notWant: []string{"baseline's capacity"},
			rows: [][]string{
				{"baseline", "1000", "4.00×"},
				{"ambient", "800", "3.20×"},
				{"sidecar (reference)", "250", "1.00×"},
			},
		},
		{
			name: "calibrated, closed loop: no rate to offer a fraction of",
			sc: &results.Scaling{Mode: "calibrated", Fraction: 0.3, Factor: 0.1, Reference: "baseline",
				Capacities: map[string]float64{"baseline": 150.3}},
			want:    []string{"Calibrated on the slowest mesh, baseline (150 req/s)", "factor 0.100"},
			notWant: []string{"open-loop", "published rate"},
			rows:    [][]string{{"baseline (reference)", "150", "1.00×"}},
		},
		{
			name:    "calibrated on the baseline, as results from before calibrating on the slowest mesh",
			sc:      &results.Scaling{Mode: "calibrated", Fraction: 0.5, Factor: 0.2, BaselineCapacity: 900},
			want:    []string{"the baseline's capacity was measured at 900 req/s and the load set to 50.0% of it"},
			notWant: []string{"slowest"},
		},
		{
			name:    "fixed factor",
			sc:      &results.Scaling{Mode: "factor", Factor: 0.5, Note: "open-loop rates and request counts multiplied by the factor given with --scale"},
			want:    []string{"fixed factor", "factor 0.500 of the published load", "Open-loop rates and request counts multiplied"},
			notWant: []string{"Calibrated", "capacity"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			blocks := scaling(tt.sc)
			if len(blocks) == 0 || blocks[0].Text == "" {
				t.Fatalf("blocks %+v: want the text first", blocks)
			}
			text := blocks[0].Text
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(text, w) {
					t.Errorf("text says %q:\n%s", w, text)
				}
			}
			var rows [][]string
			if len(blocks) > 1 {
				rows = blocks[1].Table.Rows
			}
			if !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("capacity rows %q, want %q", rows, tt.rows)
			}
		})
	}
}
