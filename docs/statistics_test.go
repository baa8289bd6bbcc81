package docs_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/meshbench/meshbench/internal/analysis"
)

// TestStatisticsQuotesTheLevels checks the exact levels statistics.md
// quotes against what the interval functions compute at those counts.
func TestStatisticsQuotesTheLevels(t *testing.T) {
	b, err := os.ReadFile("statistics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	units := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i*i + 1)
		}
		return xs
	}
	pct := func(level float64, digits int) string {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.*f", digits, 100*level), "0"), ".") + "%"
	}
	want := []string{
		pct(analysis.MedianCI(units(2)).Level, 2) + " for two units",
		pct(analysis.MedianCI(units(3)).Level, 2) + " for three",
		pct(analysis.MedianCI(units(4)).Level, 2) + " for four",
		pct(analysis.MedianCI(units(5)).Level, 2) + " for five; six give " + pct(analysis.MedianCI(units(6)).Level, 1),
		"Six units give [min, max] at " + pct(analysis.ShiftCI(units(6)).Level, 1),
		"seven the third Walsh average from each end at " + pct(analysis.ShiftCI(units(7)).Level, 1),
		"six deployments a side give " + pct(analysis.ShiftBetween(units(6), units(6)).Level, 1),
	}
	// 1/C(12, 6) is the smallest one-sided p-value of six units a side: B's
	// six all above A's.
	a, bb := units(6), units(6)
	for i := range bb {
		bb[i] += 1000
	}
	smallest := analysis.HigherP(a, bb)
	want = append(want, fmt.Sprintf("Six deployments a side give 1/%.0f, enough for a family of up to %d figures", 1/smallest, int(math.Floor(analysis.GateAlpha/smallest))))
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("statistics.md does not say %q", w)
		}
	}
}
