package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/cost"
)

// The -results mode: a real run's units are the population. For each
// figure the report shows with an interval, the run's independent units
// (its deployments, or its rounds when it ran one deployment) are taken
// as the whole population; a resampled study draws as many units with
// replacement, computes the interval the report would over them, and
// counts whether it covers the population's value (its median, mean,
// pseudo-median, or zero for two resampled runs of one population).
// The run is read with the loader the report uses (analysis.Load), and
// the units with the same functions.
//
// A population of n values is discrete, and resampling it is harder on
// an interval than the data it stands for: six draws from six values
// hold four distinct ones on average, ties narrow a Walsh average's or
// a mean's interval, and an order-statistic interval covers more than it
// claims where its level is short of 94% (three units' [min, max], 75%,
// covers 1 - 2/27, 92.6%, of resamples of three values). So each figure
// is measured twice: on the discrete population, and on the smoothed one
// (each draw a unit plus normal kernel noise, Silverman's bandwidth,
// shrunk so that the mean and variance stay the units'), which keeps the
// units' shape, skew included, without their ties; the verdict judges
// the smoothed one. A row whose coverage is above its shown level by more
// than 2 points, and below 94%, says OVER: it covers more than it claims,
// which the done-when does not call a match but which misleads no one
// into trusting it more than it deserves; it is not counted as failing.

// A resampledFigure is one figure's units and how its interval is
// computed and judged.
type resampledFigure struct {
	figure, mesh, config string
	units                []float64
	kind                 figureKind
}

type figureKind int

const (
	kindMedian  figureKind = iota // MedianCI, of the population's median
	kindMean                      // MeanCI, of its mean
	kindShift                     // ShiftCI, of its pseudo-median
	kindBetween                   // Between of two resampled runs, of 0
)

// resampleRow is one figure's measured coverage.
type resampleRow struct {
	resampledFigure
	shown, discrete, coverage float64
}

// verdict judges the smoothed population's coverage.
func (w resampleRow) verdict() string {
	switch {
	case passes(w.coverage, w.shown):
		return "PASS"
	case w.coverage > w.shown:
		return "OVER"
	}
	return "FAIL"
}

// resampleRun prints the coverage of every figure of one results
// directory and returns the number that FAIL.
func resampleRun(out io.Writer, dir string, resamples int, seed uint64) (int, error) {
	rows, err := resampleDir(dir, resamples, seed)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "%s: each figure's units resampled %d times (n drawn with replacement from the run's n), seed %d;\n", dir, resamples, seed)
	fmt.Fprintln(out, "discrete: the units as they are; smoothed: each draw a unit plus kernel noise (mean and variance kept), judged")
	fmt.Fprintf(out, "\n%-38s %-22s %-30s %5s %8s %9s %9s  %s\n", "figure", "mesh", "configuration", "units", "shown", "discrete", "smoothed", "done-when")
	failed := 0
	for _, w := range rows {
		v := w.verdict()
		if v == "FAIL" {
			failed++
		}
		fmt.Fprintf(out, "%-38s %-22s %-30s %5d %7.2f%% %8.2f%% %8.2f%%  %s\n", w.figure, w.mesh, w.config, len(w.units), 100*w.shown, 100*w.discrete, 100*w.coverage, v)
	}
	fmt.Fprintln(out)
	return failed, nil
}

// resampleDir loads dir and measures each figure.
func resampleDir(dir string, resamples int, seed uint64) ([]resampleRow, error) {
	d, err := analysis.Load(dir, analysis.Options{})
	if err != nil {
		return nil, err
	}
	figs, err := figuresOf(d)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x726573616d706c65))
	var rows []resampleRow
	for _, f := range figs {
		shown, discrete, cov := resampleFigure(r, f, resamples)
		rows = append(rows, resampleRow{f, shown, discrete, cov})
	}
	return rows, nil
}

// figuresOf lists every figure of the run with an interval, and its
// units, as the verdict and compare compute them.
func figuresOf(d *analysis.Dataset) ([]resampledFigure, error) {
	catalog, err := cost.LoadCatalog("")
	if err != nil {
		return nil, err
	}
	prices, err := cost.DefaultUnitPrices(catalog)
	if err != nil {
		return nil, err
	}
	dp := analysis.PartDataPlane
	medians := []analysis.Metric{analysis.P50, analysis.P99, analysis.QPS, analysis.CPU(dp), analysis.CPUPerRequest, analysis.Memory(dp)}
	var out []resampledFigure
	add := func(f resampledFigure) {
		if len(f.units) >= 2 && !slices.ContainsFunc(f.units, math.IsNaN) {
			out = append(out, f)
		}
	}
	for _, c := range d.Configs {
		for _, mesh := range d.Meshes {
			g := d.Group(mesh, c)
			if g == nil || len(g.Reps) == 0 {
				continue
			}
			at := func(figure string, units []float64, k figureKind) {
				add(resampledFigure{figure: figure, mesh: mesh, config: c.Label(), units: units, kind: k})
			}
			for _, m := range medians {
				units := g.Sample(m).Units()
				at(m.Label(), units, kindMedian)
			}
			for _, m := range []analysis.Metric{analysis.P50, analysis.CPUPerRequest} {
				at(m.Label()+", A/A", g.Sample(m).Units(), kindBetween)
			}
			// The price: USD per million requests, priced per repetition
			// as the verdict prices it, the mean over the deployments.
			var usd []float64
			var reps []*analysis.Rep
			for _, rep := range g.Reps {
				rate := rep.Values[analysis.QPS]
				cores, ok := rep.Values[analysis.CPU(dp)]
				if !ok || rate <= 0 {
					continue
				}
				gb := rep.Values[analysis.Memory(dp)] / (1 << 30)
				usd, reps = append(usd, prices.PerMillionRequests(cores, gb, rate)), append(reps, rep)
			}
			at("USD per million requests", analysis.RepSample(reps, usd).MeanUnits(), kindMean)
			if d.Baseline == "" || mesh == d.Baseline {
				continue
			}
			bg := d.Group(d.Baseline, c)
			if bg == nil {
				continue
			}
			for _, m := range []analysis.Metric{analysis.P50, analysis.P99} {
				pu := analysis.PairUnits(bg.Sample(m), g.Sample(m))
				at("added "+m.Label(), pu.Delta, kindShift)
				at("added "+m.Label()+", A/A", pu.Delta, kindBetween)
			}
			for _, m := range []analysis.Metric{analysis.QPS, analysis.CPUPerRequest} {
				at(m.Label()+" ratio", analysis.PairUnits(bg.Sample(m), g.Sample(m)).Pct, kindShift)
			}
		}
		if bg := d.Group(d.Baseline, c); bg != nil {
			for _, p := range d.Parities(c) {
				rg, og := d.Group(p.Meshbench, c), d.Group(p.Istiod, c)
				add(resampledFigure{figure: "parity added p50 ratio", mesh: p.Istiod, config: c.Label(),
					units: analysis.AddedRatioUnits(bg.Sample(analysis.P50), rg.Sample(analysis.P50), og.Sample(analysis.P50)), kind: kindMedian})
			}
		}
	}
	return out, nil
}

// resampleFigure measures one figure on both populations its units give:
// the discrete one (each unit drawn as it is) and the smoothed one (each
// draw a unit plus kernel noise, shrunk to keep the units' mean and
// variance: Silverman and Young, "The bootstrap: to smooth or not to
// smooth?", Biometrika 1987), which has their shape without their ties.
// It returns the level the interval shows and the share of each that
// covered.
func resampleFigure(r *rand.Rand, f resampledFigure, resamples int) (shown, discrete, smoothed float64) {
	pop := f.units
	n := len(pop)
	var mean, variance float64
	for _, x := range pop {
		mean += x / float64(n)
	}
	for _, x := range pop {
		variance += (x - mean) * (x - mean) / float64(n)
	}
	// Silverman's bandwidth, and the shrink that keeps the variance.
	h := 1.06 * math.Sqrt(variance) * math.Pow(float64(n), -0.2)
	shrink := 1 / math.Sqrt(1+h*h/math.Max(variance, math.SmallestNonzeroFloat64))
	discreteDraw := func() float64 { return pop[r.IntN(n)] }
	smoothDraw := func() float64 { return mean + shrink*(pop[r.IntN(n)]-mean+h*r.NormFloat64()) }
	if variance == 0 {
		smoothDraw = discreteDraw
	}
	measure := func(draw func() float64, truth float64) float64 {
		sample := func() []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = draw()
			}
			return xs
		}
		hit := 0
		for range resamples {
			var e analysis.Estimate
			switch f.kind {
			case kindMedian:
				e = analysis.MedianCI(sample())
			case kindMean:
				e = analysis.MeanCI(sample())
			case kindShift:
				e = analysis.ShiftCI(sample())
			case kindBetween:
				e = analysis.Between(sample(), sample()).Delta
			}
			shown = e.Level
			if e.Lo <= truth && truth <= e.Hi {
				hit++
			}
		}
		return float64(hit) / float64(resamples)
	}
	// The populations' values: the discrete one's exactly, the smoothed
	// one's from many draws (its mean is the units' by construction).
	const truthDraws = 100_000
	many := func(draw func() float64) []float64 {
		xs := make([]float64, truthDraws)
		for i := range xs {
			xs[i] = draw()
		}
		return xs
	}
	var dt, st float64
	switch f.kind {
	case kindMedian:
		dt, st = analysis.Median(pop), analysis.Median(many(smoothDraw))
	case kindMean:
		dt, st = mean, mean
	case kindShift:
		dt, st = pseudoMedian(pop), analysis.Median(many(func() float64 { return (smoothDraw() + smoothDraw()) / 2 }))
	}
	return shown, measure(discreteDraw, dt), measure(smoothDraw, st)
}

// pseudoMedian is the pseudo-median of the discrete population xs: the
// median of (X + X')/2 over every ordered pair of its values, X and X'
// independent draws from it.
func pseudoMedian(xs []float64) float64 {
	var w []float64
	for _, a := range xs {
		for _, b := range xs {
			w = append(w, (a+b)/2)
		}
	}
	return analysis.Median(w)
}
