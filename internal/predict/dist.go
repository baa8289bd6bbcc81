package predict

import (
	"math"
	"slices"
)

// Points is how many equally likely values a Dist keeps: its quantiles at
// (i+0.5)/Points. Sums and maxima of two are computed over every pair and
// brought back to this many, which keeps p99 within a point of the exact
// combination and costs Points² operations.
const Points = 200

// Dist is a distribution of added latency in milliseconds, as Points
// sorted, equally likely values.
type Dist []float64

// Zero is the distribution of a certain 0: nothing added.
func Zero() Dist { return make(Dist, Points) }

// FromQuantile builds a Dist from a quantile function.
func FromQuantile(q func(p float64) float64) Dist {
	d := make(Dist, Points)
	for i := range d {
		d[i] = q((float64(i) + 0.5) / Points)
	}
	// A quantile function read from two histograms (their difference)
	// need not be monotone; sorting keeps the values and makes it one.
	slices.Sort(d)
	return d
}

// Quantile returns the value below which a fraction p of the mass lies,
// interpolated between points.
func (d Dist) Quantile(p float64) float64 {
	x := p*Points - 0.5
	switch {
	case x <= 0:
		return d[0]
	case x >= Points-1:
		return d[Points-1]
	}
	i := int(math.Floor(x))
	f := x - float64(i)
	return d[i]*(1-f) + d[i+1]*f
}

// Mean is the distribution's mean.
func (d Dist) Mean() float64 {
	var s float64
	for _, v := range d {
		s += v
	}
	return s / float64(len(d))
}

// Scale multiplies every value by k.
func (d Dist) Scale(k float64) Dist {
	out := make(Dist, len(d))
	for i, v := range d {
		out[i] = v * k
	}
	return out
}

// Sum is the distribution of X+Y for independent X ~ d and Y ~ o: two
// calls made one after the other.
func (d Dist) Sum(o Dist) Dist { return d.combine(o, func(a, b float64) float64 { return a + b }) }

// Max is the distribution of max(X, Y) for independent X ~ d and Y ~ o:
// two calls made in parallel, the caller waiting for both.
func (d Dist) Max(o Dist) Dist { return d.combine(o, math.Max) }

func (d Dist) combine(o Dist, f func(a, b float64) float64) Dist {
	all := make([]float64, 0, len(d)*len(o))
	for _, a := range d {
		for _, b := range o {
			all = append(all, f(a, b))
		}
	}
	slices.Sort(all)
	return resample(all)
}

// resample brings sorted, equally likely values back to Points quantiles.
func resample(sorted []float64) Dist {
	n := len(sorted)
	out := make(Dist, Points)
	for i := range out {
		out[i] = sorted[min(n-1, int((float64(i)+0.5)/Points*float64(n)))]
	}
	return out
}

// Mix is the distribution of X that is drawn from ds[i] with probability
// ws[i] (weights need not sum to 1): a call made only sometimes (mixed
// with Zero), or a service whose versions behave differently.
func Mix(ws []float64, ds []Dist) Dist {
	type wv struct{ v, w float64 }
	var all []wv
	var total float64
	for i, d := range ds {
		for _, v := range d {
			all = append(all, wv{v, ws[i]})
		}
		total += ws[i] * float64(len(d))
	}
	slices.SortFunc(all, func(a, b wv) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	out := make(Dist, Points)
	var cum float64
	j := 0
	for i := range out {
		target := (float64(i) + 0.5) / Points * total
		for j < len(all)-1 && cum+all[j].w <= target {
			cum += all[j].w
			j++
		}
		out[i] = all[j].v
	}
	return out
}
