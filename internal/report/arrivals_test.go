package report

import (
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
)

// TestLoadTextNamesPoissonArrivals checks that the load line above each
// table, and the verdict's load in the JSON report, say when an open loop
// sent Poisson arrivals, and say nothing new for evenly spaced ones,
// named or left at the default as in results before schema 19.
func TestLoadTextNamesPoissonArrivals(t *testing.T) {
	t.Parallel()
	group := func(arrivals string) *analysis.Group {
		return &analysis.Group{Reps: []*analysis.Rep{{
			Load:   results.Load{Options: results.LoadOptions{Rate: 200, Arrivals: arrivals, Connections: 32, Duration: 6 * time.Second}},
			Values: map[analysis.Metric]float64{analysis.Offered: 200},
		}}}
	}
	if got, want := loadText(group("poisson")), " req/s in total, Poisson arrivals, 32 connections"; !strings.HasPrefix(got, "open loop offering ") || !strings.Contains(got, want) {
		t.Errorf("Poisson load reads %q, want an open loop with %q", got, want)
	}
	for _, a := range []string{"", "uniform"} {
		if got := loadText(group(a)); strings.Contains(got, "Poisson") || !strings.Contains(got, " req/s in total, 32 connections") {
			t.Errorf("arrivals %q: load reads %q", a, got)
		}
	}
}
