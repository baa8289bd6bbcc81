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

// TestStatisticsQuotesThePrice checks what statistics.md says of the
// price's interval against the code and the measured block: the level
// its quantile is taken at, its width over Student's t's at each count,
// and the coverage ranges of MeanCI and of Student's t that the block's
// rows show.
func TestStatisticsQuotesThePrice(t *testing.T) {
	b, err := os.ReadFile("statistics.md")
	if err != nil {
		t.Fatal(err)
	}
	raw := string(b)
	doc := strings.Join(strings.Fields(raw), " ")
	lvl := func(n int) string {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.1f", 100*analysis.MeanLevel(n)), "0"), ".") + "%"
	}
	ratio := func(n int) string {
		return fmt.Sprintf("%.2f", analysis.StudentQuantile(analysis.MeanLevel(n), n-1)/analysis.TQuantile(n-1))
	}
	want := []string{
		fmt.Sprintf("labelled 95%%: %s up to three units, %s at four and five, %s at six and seven, %s at eight to eleven, %s at twelve to forty, %s up to 99 and %s beyond",
			lvl(3), lvl(5), lvl(7), lvl(11), lvl(40), lvl(99), lvl(100)),
		fmt.Sprintf("its width %s at three units, %s at five, %s at six, %s at seven times Student's width", ratio(3), ratio(5), ratio(6), ratio(7)),
	}
	// MeanLevel's steps are where the sentence puts them.
	for _, step := range [][2]int{{3, 4}, {5, 6}, {7, 8}, {11, 12}, {40, 41}, {99, 100}} {
		if analysis.MeanLevel(step[0]) == analysis.MeanLevel(step[1]) {
			t.Errorf("MeanLevel does not step between %d and %d units, as statistics.md says", step[0], step[1])
		}
	}
	// The block's coverage column of the rows that start with prefix and
	// mention units (the price table's second column is the design, its
	// third the units).
	rangeOf := func(prefix, units string) string {
		begin, end := strings.Index(raw, "<!-- validity:figures:begin -->"), strings.Index(raw, "<!-- validity:figures:end -->")
		if begin < 0 || end < begin {
			t.Fatal("statistics.md has no validity:figures block")
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, l := range strings.Split(raw[begin:end], "\n") {
			if !strings.HasPrefix(l, prefix) || (units != "" && !strings.Contains(l, " "+units+" ")) {
				continue
			}
			var pcts []float64
			for _, f := range strings.Fields(l) {
				var v float64
				if _, err := fmt.Sscanf(f, "%f%%", &v); err == nil && strings.HasSuffix(f, "%") {
					pcts = append(pcts, v)
				}
			}
			if len(pcts) == 0 {
				continue
			}
			c := pcts[len(pcts)-1]
			lo, hi = math.Min(lo, c), math.Max(hi, c)
		}
		if math.IsInf(lo, 0) {
			t.Fatalf("the block has no row %q", prefix)
		}
		return fmt.Sprintf("%.1f%% to %.1f%%", lo, hi)
	}
	want = append(want,
		"covered "+rangeOf("price, the mean (MeanCI)", "")+" there",
		"skewed, heavy-tailed units it covered "+rangeOf("Student's t, 95%", "skewed")+" at three to seven units",
		"(measured "+rangeOf("MeanCI: calibrated Student's t", "normal")+" at three to seven units)",
	)
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("statistics.md does not say %q", w)
		}
	}
}
