// Command validity measures what meshbench's intervals and its gate do at
// the presets' defaults. By simulation: for each interval kind the
// verdict, the report and compare show, the share of simulated studies
// whose interval covers the true value, beside the level the interval
// claims and the level the report shows; the price interval's candidates
// with their widths; the batch-means interval on autocorrelated series;
// the capacity search's interval on systems of known capacity; and the
// gate's false-alarm rate on A/A pairs and its power on pairs whose B
// carries a known regression. The units are skewed and heavy-tailed, each
// deployment with an effect of its own (see docs/statistics.md for the
// model and the figures). With -results, it resamples the stored raw data
// of real runs instead (see resample.go).
//
//	go run ./bench/validity
//	go run ./bench/validity -trials 100000 -seed 7
//	go run ./bench/validity -results out/quick-1 -results out/quick-2
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
)

func main() {
	trials := flag.Int("trials", 20000, "simulated studies per case")
	seed := flag.Uint64("seed", 1, "seed of the simulation")
	searches := flag.Int("searches", 300, "simulated capacity searches per system and preset (0: none)")
	resamples := flag.Int("resamples", 10000, "with -results: resampled studies per figure")
	var dirs []string
	flag.Func("results", "a results directory whose deployments to resample instead of simulating (repeatable)", func(s string) error {
		dirs = append(dirs, s)
		return nil
	})
	flag.Parse()
	if *trials < 100 || *resamples < 100 {
		fmt.Fprintln(os.Stderr, "validity: -trials and -resamples must be at least 100")
		os.Exit(2)
	}
	var failed int
	if len(dirs) > 0 {
		for _, dir := range dirs {
			n, err := resampleRun(os.Stdout, dir, *resamples, *seed)
			if err != nil {
				fmt.Fprintln(os.Stderr, "validity:", err)
				os.Exit(2)
			}
			failed += n
		}
	} else {
		var err error
		if failed, err = run(os.Stdout, config{trials: *trials, seed: *seed, searches: *searches}); err != nil {
			fmt.Fprintln(os.Stderr, "validity:", err)
			os.Exit(2)
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "validity: %d case(s) FAIL\n", failed)
		os.Exit(1)
	}
}

// config is one run's settings.
type config struct {
	trials   int
	seed     uint64
	searches int
}

// A design is a preset's unit count: quick's six deployments of one
// round, regression's seven rounds, five, the fewest a study may plan
// below 95% whose level the report shows, and envoy-releases' three.
type design struct {
	name  string
	units int
}

var designs = []design{
	{"quick (6 deployments)", 6},
	{"regression (7 rounds)", 7},
	{"5 units (level shown)", 5},
	{"envoy-releases (3 units)", 3},
}

// population draws one deployment's unit of a figure: a deployment effect
// (lognormal, 5%) times the round's own noise (lognormal, 7%, and one
// round in twenty a 1.5x spike, the host's noise), so the units are
// right-skewed and heavy-tailed as latencies and CPU per request are.
// Ratios 2:1 of round to deployment variance match the pilot runs'
// CPU per request (docs/statistics.md).
type population struct {
	scale, sdDeploy, sdRound, spikeP, spike float64
}

func (p population) draw(r *rand.Rand) float64 {
	v := p.scale * math.Exp(p.sdDeploy*r.NormFloat64()+p.sdRound*r.NormFloat64())
	if r.Float64() < p.spikeP {
		v *= p.spike
	}
	return v
}

var (
	baseline = population{scale: 3.0, sdDeploy: 0.05, sdRound: 0.07, spikeP: 0.05, spike: 1.5}
	sidecar  = population{scale: 3.6, sdDeploy: 0.05, sdRound: 0.07, spikeP: 0.05, spike: 1.5}
	// istiodTwin is the parity study's other sidecar, istiod's
	// configuration of the same proxies, a little slower.
	istiodTwin = population{scale: 3.75, sdDeploy: 0.05, sdRound: 0.07, spikeP: 0.05, spike: 1.5}
)

// roundDraw is one deployment's (one round's) values of several meshes,
// sharing the deployment's effect and the round's spike (the host's noise
// falls on every mesh of a round), each with its own round noise.
func roundDraw(r *rand.Rand, ps ...population) []float64 {
	d := math.Exp(ps[0].sdDeploy * r.NormFloat64())
	spike := 1.0
	if r.Float64() < ps[0].spikeP {
		spike = ps[0].spike
	}
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.scale * d * spike * math.Exp(p.sdRound*r.NormFloat64())
	}
	return out
}

// pairDraw is one deployment's baseline and sidecar.
func pairDraw(r *rand.Rand) (b, s float64) {
	v := roundDraw(r, baseline, sidecar)
	return v[0], v[1]
}

// truth estimates a population quantity from many draws.
const truthDraws = 2_000_000

func trueMedian(r *rand.Rand, draw func(*rand.Rand) float64) float64 {
	xs := make([]float64, truthDraws)
	for i := range xs {
		xs[i] = draw(r)
	}
	return analysis.Median(xs)
}

func trueMean(r *rand.Rand, draw func(*rand.Rand) float64) float64 {
	sum := 0.0
	for range truthDraws {
		sum += draw(r)
	}
	return sum / truthDraws
}

// truePseudoMedian is the center Wilcoxon's interval estimates: the
// median of (X + X')/2 over independent draws.
func truePseudoMedian(r *rand.Rand, draw func(*rand.Rand) float64) float64 {
	return trueMedian(r, func(r *rand.Rand) float64 { return (draw(r) + draw(r)) / 2 })
}

func sample(r *rand.Rand, n int, draw func(*rand.Rand) float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = draw(r)
	}
	return xs
}

type row struct {
	kind, design    string
	shown, coverage float64
}

// pass is the done-when: coverage at least 94%, or within 2 points of
// the level the report shows.
func (w row) pass() bool { return passes(w.coverage, w.shown) }

func passes(coverage, shown float64) bool {
	return coverage >= 0.94 || math.Abs(coverage-shown) <= 0.02
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// coverage is the share of trials whose interval covers its truth, the
// level the last interval showed, and the intervals' mean width.
func coverage(trials int, f func() (analysis.Estimate, float64)) (cov, level, width float64) {
	hit := 0
	for range trials {
		e, truth := f()
		level = e.Level
		width += (e.Hi - e.Lo) / float64(trials)
		if e.Lo <= truth && truth <= e.Hi {
			hit++
		}
	}
	return float64(hit) / float64(trials), level, width
}

func run(out io.Writer, c config) (int, error) {
	r := rand.New(rand.NewPCG(c.seed, c.seed^0x9e3779b97f4a7c15))
	trials := c.trials
	added := func(r *rand.Rand) float64 { b, s := pairDraw(r); return s - b }
	// pct is a unit's difference in percent of its own base, as
	// PairUnits computes it; a ratio is one plus that over 100.
	pct := func(r *rand.Rand) float64 { b, s := pairDraw(r); return 100 * (s - b) / b }
	// parity is a unit's added-latency ratio, (o - b)/(r - b) in one
	// round, as AddedRatio computes it.
	parity := func(r *rand.Rand) float64 {
		v := roundDraw(r, baseline, sidecar, istiodTwin)
		return (v[2] - v[0]) / (v[1] - v[0])
	}
	medianTruth := trueMedian(r, sidecar.draw)
	meanTruth := trueMean(r, sidecar.draw)
	addedTruth := truePseudoMedian(r, added)
	addedMedian := trueMedian(r, added)
	ratioTruth := 1 + truePseudoMedian(r, pct)/100
	ratioOfMedians := medianTruth / trueMedian(r, baseline.draw)
	parityTruth := trueMedian(r, parity)

	var rows []row
	covers := func(kind string, d design, f func() (analysis.Estimate, float64)) {
		cov, level, _ := coverage(trials, f)
		rows = append(rows, row{kind, d.name, level, cov})
	}
	for _, d := range designs {
		n := d.units
		covers("median (MedianCI)", d, func() (analysis.Estimate, float64) {
			return analysis.MedianCI(sample(r, n, sidecar.draw)), medianTruth
		})
		covers("price, the mean (MeanCI)", d, func() (analysis.Estimate, float64) {
			return analysis.MeanCI(sample(r, n, sidecar.draw)), meanTruth
		})
		covers("added, paired (ShiftCI)", d, func() (analysis.Estimate, float64) {
			return analysis.ShiftCI(sample(r, n, added)), addedTruth
		})
		covers("added, paired, of the median", d, func() (analysis.Estimate, float64) {
			return analysis.ShiftCI(sample(r, n, added)), addedMedian
		})
		covers("ratio, paired (Diff.Ratio)", d, func() (analysis.Estimate, float64) {
			return ratioOf(r, n), ratioTruth
		})
		covers("ratio, paired, of the medians' ratio", d, func() (analysis.Estimate, float64) {
			return ratioOf(r, n), ratioOfMedians
		})
		covers("parity added ratio (AddedRatio)", d, func() (analysis.Estimate, float64) {
			return parityOf(r, n), parityTruth
		})
		covers("between runs, A/A (Between)", d, func() (analysis.Estimate, float64) {
			return analysis.Between(sample(r, n, sidecar.draw), sample(r, n, sidecar.draw)).Delta, 0
		})
		covers("between runs, +10% in % (Between)", d, func() (analysis.Estimate, float64) {
			a := sample(r, n, sidecar.draw)
			b := sample(r, n, sidecar.draw)
			for i := range b {
				b[i] *= 1.10
			}
			return analysis.Between(a, b).Pct, 10
		})
		covers("between runs, added, A/A (Between)", d, func() (analysis.Estimate, float64) {
			return analysis.Between(sample(r, n, added), sample(r, n, added)).Delta, 0
		})
	}

	failed := 0
	fmt.Fprintf(out, "%d simulated studies a case, seed %d\n\n", trials, c.seed)
	fmt.Fprintf(out, "%-38s %-26s %8s %8s %9s  %s\n", "interval", "design", "nominal", "shown", "coverage", "done-when")
	for _, w := range rows {
		if !w.pass() {
			failed++
		}
		fmt.Fprintf(out, "%-38s %-26s %7.1f%% %7.2f%% %8.2f%%  %s\n", w.kind, w.design, 100*analysis.Nominal, 100*w.shown, 100*w.coverage, verdict(w.pass()))
	}

	failed += priceMethods(out, r, trials, meanTruth)
	failed += series(out, r, trials)
	n, err := capacity(out, c.searches, c.seed)
	if err != nil {
		return failed, err
	}
	failed += n
	failed += gate(out, r, trials)
	return failed, nil
}

// ratioOf is a simulated study's paired ratio, sidecar over baseline, as
// Paired(...).Ratio() gives it: Wilcoxon's interval over each unit's
// difference in percent of its base, plus one.
func ratioOf(r *rand.Rand, n int) analysis.Estimate {
	var b, s analysis.Sample
	for i := range n {
		x, y := pairDraw(r)
		b = append(b, analysis.Obs{Deployment: i + 1, Round: i + 1, V: x})
		s = append(s, analysis.Obs{Deployment: i + 1, Round: i + 1, V: y})
	}
	return analysis.Paired(b, s).Ratio()
}

// parityOf is a simulated parity study's added-latency ratio, istiod's
// sidecar over meshbench's, as AddedRatio gives it.
func parityOf(r *rand.Rand, n int) analysis.Estimate {
	var b, ref, o analysis.Sample
	for i := range n {
		v := roundDraw(r, baseline, sidecar, istiodTwin)
		b = append(b, analysis.Obs{Deployment: i + 1, Round: i + 1, V: v[0]})
		ref = append(ref, analysis.Obs{Deployment: i + 1, Round: i + 1, V: v[1]})
		o = append(o, analysis.Obs{Deployment: i + 1, Round: i + 1, V: v[2]})
	}
	return analysis.AddedRatio(b, ref, o)
}

// gate prints the gate's false-alarm rate and power, and counts a
// false-alarm rate above GateAlpha (beyond its sampling error) as a
// failure.
func gate(out io.Writer, r *rand.Rand, trials int) int {
	failed := 0
	fmt.Fprintf(out, "\ngate: family added p50, added p99, CPU per request of sidecar and ambient (6 figures), Holm at %.0f%%, regression >= %.0f%%\n",
		100*analysis.GateAlpha, analysis.RegressionMinPct)
	fmt.Fprintf(out, "%-26s %12s %14s %14s %14s\n", "design", "false alarm", "power +5% CPU", "power +10% CPU", "power +30% CPU")
	for _, d := range designs {
		fa := gateRate(r, trials, d.units, 1.0)
		p5 := gateRate(r, trials, d.units, 1.05)
		p10 := gateRate(r, trials, d.units, 1.10)
		p30 := gateRate(r, trials, d.units, 1.30)
		// The false-alarm rate must hold GateAlpha; its sampling error
		// at trials studies is about sqrt(0.05·0.95/trials).
		ok := fa <= analysis.GateAlpha+3*math.Sqrt(analysis.GateAlpha*(1-analysis.GateAlpha)/float64(trials))
		if !ok {
			failed++
		}
		fmt.Fprintf(out, "%-26s %11.2f%% %13.1f%% %13.1f%% %13.1f%%  %s\n", d.name, 100*fa, 100*p5, 100*p10, 100*p30, verdict(ok))
	}
	return failed
}

// gateRate is the share of simulated pairs the gate fails: A and B each n
// independent units of six figures (three per mesh, correlated through
// the deployment they share), B's sidecar CPU per request multiplied by
// factor. Each figure's p-value is the Mann-Whitney one compare uses
// (Between's PHigher); Holm decides over the family, and a rejected
// figure counts when its estimate is at least RegressionMinPct worse.
func gateRate(r *rand.Rand, trials, n int, factor float64) float64 {
	const figures = 6
	const sidecarCPU = 2 // the figure the injected work moves
	draw := func(f float64) [][]float64 {
		out := make([][]float64, figures)
		for range n {
			// One deployment: its effect moves all its figures together.
			d := math.Exp(0.05 * r.NormFloat64())
			for k := range figures {
				v := d * math.Exp(0.07*r.NormFloat64())
				if r.Float64() < 0.05 {
					v *= 1.5
				}
				if k == sidecarCPU {
					v *= f
				}
				out[k] = append(out[k], v)
			}
		}
		return out
	}
	alarms := 0
	for range trials {
		a, b := draw(1), draw(factor)
		ps := make([]float64, figures)
		pct := make([]float64, figures)
		for k := range figures {
			diff := analysis.Between(a[k], b[k])
			ps[k], pct[k] = diff.PHigher, diff.Pct.Median
		}
		if slices.ContainsFunc(indices(analysis.Holm(ps, analysis.GateAlpha)), func(k int) bool { return pct[k] >= analysis.RegressionMinPct }) {
			alarms++
		}
	}
	return float64(alarms) / float64(trials)
}

func indices(rejected []bool) []int {
	var out []int
	for k, yes := range rejected {
		if yes {
			out = append(out, k)
		}
	}
	return out
}
