package search

import (
	"math"
	"slices"
)

// The capacity is fitted from every conclusive trial's SLO score S, as a
// censored regression (a Tobit model with logistic errors):
//
//	ln S = (a0 + a1 (x - xc) + e) / tau,  x = ln rate, e ~ standard logistic,
//
// where a trial whose score lies outside the band [1/Band, Band], or whose
// rate is more than a factor Window from the fitted capacity, counts only
// as "at most 1/Band" or "at least Band", by its verdict. Near the SLO and
// near the capacity the score's logarithm is close to a straight line in
// the log of the rate, and its spread from the line is the trial-to-trial
// noise; far below (the flat foot of the latency curve, which may lie
// within the band when the SLO is loose) and far above (an overloaded
// system, or errors) a trial says only on which side it lies, so that
// neither bends the line. The window moves with the fit, which is
// refitted until the trials within it no longer change. The probability that a trial at rate r
// breaks the SLO is then a logistic curve, F(a0 + a1 (ln r - xc)); the
// capacity is where that curve crosses BreachProbability.
//
// Written with tau and a = beta*tau (Olsen's reparameterization), the
// log-likelihood is concave, so Newton's method finds its maximum. Two
// weak penalties keep it finite where trials are few or fall apart
// cleanly (every pass below every fail, all censored): a curve steeper
// than 1/steepest a unit of ln rate and a noise below 1/sharpest of ln S
// are held back. Neither binds at the slopes and noise this project has
// measured.

// Band bounds the scores the fit reads as figures: within a factor of 2
// of the SLO's limits. Window bounds their rates: within a factor of 2 of
// the fitted capacity.
const (
	Band   = 2.0
	Window = 2.0
)

// BreachProbability is the probability of breaking the SLO at which a
// trial's rate is the capacity: the rate a trial is as likely to break as
// to meet.
const BreachProbability = 0.5

// MaxScore bounds a stored score: JSON has no infinity, and a score this
// far over the band counts as at least Band anyway.
const MaxScore = 1e6

const (
	steepest = 200.0 // a1: the logit moves 200 for a factor e of rate
	sharpest = 300.0 // tau: ln S noise of 1/300
)

// obs is one conclusive trial: x the log of its rate, s the log of its
// score (-Inf for a score of 0).
type obs struct{ x, s float64 }

// observe turns a trial's rate and score into an observation.
func observe(rate, score float64) obs { return obs{x: math.Log(rate), s: math.Log(score)} }

// broke says whether the trial broke the SLO.
func (o obs) broke() bool { return o.s > 0 }

// point is an observation as one fit reads it: y the log of its score, or
// the band's edge on its side with cens -1 (at most) or +1 (at least)
// when it lies outside the band or the window.
type point struct {
	x, y float64
	cens int
}

// points reads os for a fit whose capacity is at ln rate centre (NaN for
// no window).
func points(os []obs, centre float64) []point {
	lb, lw := math.Log(Band), math.Log(Window)
	ps := make([]point, len(os))
	for i, o := range os {
		p := point{x: o.x, y: o.s}
		switch {
		case o.s <= -lb, !math.IsNaN(centre) && math.Abs(o.x-centre) > lw && !o.broke():
			p.y, p.cens = -lb, -1
		case o.s >= lb, !math.IsNaN(centre) && math.Abs(o.x-centre) > lw:
			p.y, p.cens = lb, 1
		}
		ps[i] = p
	}
	return ps
}

// Fit is the fitted model (see above). SE is the standard error of the
// log of the capacity, from the inverse of the information; Within counts
// the trials whose scores were in the band.
type Fit struct {
	XC     float64 `json:"center_ln_rate"`
	Tau    float64 `json:"tau"`
	A0     float64 `json:"a0"`
	A1     float64 `json:"a1"`
	SE     float64 `json:"se_ln"`
	Within int     `json:"within_band"`
}

// LnCapacity is the log of the rate at which a trial breaks the SLO with
// BreachProbability.
func (f Fit) LnCapacity() float64 {
	return f.XC + (math.Log(BreachProbability/(1-BreachProbability))-f.A0)/f.A1
}

// Capacity is the rate at which a trial breaks the SLO with
// BreachProbability.
func (f Fit) Capacity() float64 { return math.Exp(f.LnCapacity()) }

// Breach is the fitted probability that a trial at rate breaks the SLO.
func (f Fit) Breach(rate float64) float64 {
	return logistic(f.A0 + f.A1*(math.Log(rate)-f.XC))
}

// line is the fitted median of ln S at ln rate x.
func (f Fit) line(x float64) float64 { return (f.A0 + f.A1*(x-f.XC)) / f.Tau }

// lnCapacityAt is the log of the rate at which the line plus m crosses 0:
// the capacity, when m is the median of the trials' residuals about the
// line.
func (f Fit) lnCapacityAt(m float64) float64 { return f.XC + (-m*f.Tau-f.A0)/f.A1 }

// residuals are the departures of the trials os from the fit's line, in
// ln S, of those within the window about its capacity whose side of the
// line their score tells: a score within the band by its value, one
// beyond it, where the line is within the band, as +Inf or -Inf.
func (f Fit) residuals(os []obs) []float64 {
	lb, lw := math.Log(Band), math.Log(Window)
	c := f.LnCapacity()
	var es []float64
	for _, o := range os {
		if math.Abs(o.x-c) > lw {
			continue
		}
		l := f.line(o.x)
		switch {
		case o.s >= lb:
			if l < lb {
				es = append(es, math.Inf(1))
			}
		case o.s <= -lb:
			if l > -lb {
				es = append(es, math.Inf(-1))
			}
		default:
			es = append(es, o.s-l)
		}
	}
	return es
}

// median is the median of es, false for fewer than three values or an
// infinite median (more than half beyond the band on one side).
func median(es []float64) (float64, bool) {
	if len(es) < 3 {
		return 0, false
	}
	es = slices.Clone(es)
	slices.Sort(es)
	n := len(es)
	m := es[n/2]
	if n%2 == 0 {
		a, b := es[n/2-1], es[n/2]
		switch {
		case math.IsInf(a, 0) && !math.IsInf(b, 0):
			m = b
		case math.IsInf(b, 0) && !math.IsInf(a, 0):
			m = a
		default:
			m = (a + b) / 2
		}
	}
	return m, !math.IsInf(m, 0) && !math.IsNaN(m)
}

func logistic(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// fit fits the model to os, from warm when it is a fit of most of them
// (the search refits after each trial), and says whether the fit exists:
// a line rising with the rate, whose capacity has a standard error. The
// window starts at warm's capacity, or with none, and follows the fit.
func fit(os []obs, warm *Fit) (Fit, bool) {
	centre := math.NaN()
	if warm != nil {
		centre = warm.LnCapacity()
	}
	var f Fit
	var ok bool
	var last []point
	for range 5 {
		ps := points(os, centre)
		if last != nil && slices.Equal(ps, last) {
			break
		}
		if f, ok = fitPoints(ps, warm); !ok {
			return Fit{}, false
		}
		last, warm, centre = ps, &f, f.LnCapacity()
	}
	return f, ok
}

// fitPoints is one fit of the model by Newton's method, from warm.
func fitPoints(os []point, warm *Fit) (Fit, bool) {
	if len(os) < 2 {
		return Fit{}, false
	}
	var xc float64
	within := 0
	for _, o := range os {
		xc += o.x
		if o.cens == 0 {
			within++
		}
	}
	xc /= float64(len(os))
	p := [3]float64{1 / 0.3, 0, 1} // tau, a0, a1
	if warm != nil {
		p = [3]float64{warm.Tau, warm.A0 + warm.A1*(xc-warm.XC), warm.A1}
	}
	ll := func(p [3]float64) (l float64, g [3]float64, h [3][3]float64) {
		for _, o := range os {
			u := o.x - xc
			z := p[0]*o.y - p[1] - p[2]*u
			dz := [3]float64{o.y, -1, -u}
			fz := logistic(z)
			var d1, d2 float64
			switch o.cens {
			case 0: // density of the logistic, in z
				l += -z - 2*log1pexp(-z)
				d1, d2 = 1-2*fz, -2*fz*(1-fz)
			case -1: // P(ln S <= y)
				l -= log1pexp(-z)
				d1, d2 = 1-fz, -fz*(1-fz)
			default: // P(ln S >= y)
				l -= log1pexp(z)
				d1, d2 = -fz, -fz*(1-fz)
			}
			for i := range 3 {
				g[i] += d1 * dz[i]
				for j := range 3 {
					h[i][j] += d2 * dz[i] * dz[j]
				}
			}
		}
		// The Jacobian of ln S to z, once per trial within the band.
		l += float64(within) * math.Log(p[0])
		g[0] += float64(within) / p[0]
		h[0][0] -= float64(within) / (p[0] * p[0])
		ka, kt := 1/steepest, 1/sharpest
		l -= (p[2]*ka)*(p[2]*ka)/2 + (p[0]*kt)*(p[0]*kt)/2
		g[2] -= p[2] * ka * ka
		g[0] -= p[0] * kt * kt
		h[2][2] -= ka * ka
		h[0][0] -= kt * kt
		return l, g, h
	}
	l, g, h := ll(p)
	for range 100 {
		d, ok := solve3(h, g)
		if !ok {
			return Fit{}, false
		}
		// Halve the step until the likelihood does not fall and tau stays
		// positive.
		next, nl := p, l
		for step := 1.0; step > 1e-9; step /= 2 {
			for i := range next {
				next[i] = p[i] + step*d[i]
			}
			if next[0] > 0 {
				if nl, _, _ = ll(next); nl >= l-1e-12 {
					break
				}
			}
		}
		if !(next[0] > 0) || nl < l-1e-12 {
			break // no step improves on p: it is the maximum, within rounding
		}
		done := nl-l < 1e-10
		p = next
		l, g, h = ll(p)
		if done {
			break
		}
	}
	if !(p[2] > 0) {
		return Fit{}, false // the score does not rise with the rate
	}
	cov, ok := inverse3(h)
	if !ok {
		return Fit{}, false
	}
	// Delta method: ln C = xc + (logit(p*) - a0)/a1.
	k := math.Log(BreachProbability/(1-BreachProbability)) - p[1]
	grad := [3]float64{0, -1 / p[2], -k / (p[2] * p[2])}
	var v float64
	for i := range 3 {
		for j := range 3 {
			v += grad[i] * cov[i][j] * grad[j]
		}
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return Fit{}, false
	}
	return Fit{XC: xc, Tau: p[0], A0: p[1], A1: p[2], SE: math.Sqrt(v), Within: within}, true
}

// log1pexp is ln(1 + e^z) without overflow.
func log1pexp(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// solve3 solves (-h) d = g by Gaussian elimination with partial pivoting.
func solve3(h [3][3]float64, g [3]float64) ([3]float64, bool) {
	var a [3][4]float64
	for i := range 3 {
		for j := range 3 {
			a[i][j] = -h[i][j]
		}
		a[i][3] = g[i]
	}
	for c := range 3 {
		piv := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if !(math.Abs(a[piv][c]) > 1e-300) {
			return [3]float64{}, false
		}
		a[c], a[piv] = a[piv], a[c]
		for r := range 3 {
			if r != c {
				f := a[r][c] / a[c][c]
				for k := c; k < 4; k++ {
					a[r][k] -= f * a[c][k]
				}
			}
		}
	}
	return [3]float64{a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]}, true
}

// inverse3 is the inverse of -h, the covariance of the estimates.
func inverse3(h [3][3]float64) ([3][3]float64, bool) {
	var out [3][3]float64
	for c := range 3 {
		var e [3]float64
		e[c] = 1
		d, ok := solve3(h, e)
		if !ok {
			return out, false
		}
		for r := range 3 {
			out[r][c] = d[r]
		}
	}
	return out, true
}

// lnCapacity is the search's estimate of the log of the capacity from its
// trials os and their fit f: where the line, moved by the median of the
// trials' residuals about it, crosses 0. The capacity is the rate at
// which a trial breaks the SLO half the time (BreachProbability), where
// the median of ln S is 0; the fitted line is the median only where the
// noise is as symmetric as the model's, and a skewed or bimodal p99 moves
// it. With too few residuals, or over half beyond the band on one side,
// it is the line's own crossing.
func lnCapacity(f Fit, os []obs) float64 {
	if m, ok := median(f.residuals(os)); ok {
		return f.lnCapacityAt(m)
	}
	return f.LnCapacity()
}
