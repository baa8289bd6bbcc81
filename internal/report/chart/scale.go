package chart

import (
	"math"
	"strconv"
)

// Scale maps data values to a range of pixels.
type Scale int

// Scales.
const (
	Linear Scale = iota
	Log
)

// Tick is one labelled axis position.
type Tick struct {
	Value float64
	Label string
}

// Axis describes one axis. Min and Max are found from the data when both
// are zero; Ticks are chosen when nil; Format labels chosen ticks.
type Axis struct {
	Label    string
	Scale    Scale
	Min, Max float64
	Ticks    []Tick
	Format   func(float64) string
}

// mapper turns data values into pixel positions along an axis.
type mapper struct {
	scale      Scale
	lo, hi     float64 // data range
	from, to   float64 // pixel range
	logLo, lgH float64
}

func newMapper(s Scale, lo, hi, from, to float64) mapper {
	m := mapper{scale: s, lo: lo, hi: hi, from: from, to: to}
	if s == Log {
		m.logLo, m.lgH = math.Log10(lo), math.Log10(hi)
	}
	return m
}

func (m mapper) at(v float64) float64 {
	var f float64
	if m.scale == Log {
		if v <= 0 {
			v = m.lo
		}
		f = (math.Log10(v) - m.logLo) / (m.lgH - m.logLo)
	} else {
		f = (v - m.lo) / (m.hi - m.lo)
	}
	return m.from + f*(m.to-m.from)
}

// bounds returns the axis range covering lo..hi: as given, or padded to
// round numbers (1, 2 or 5 times a power of ten on a log scale). A log axis ignores values <= 0.
func (a Axis) bounds(lo, hi float64) (float64, float64) {
	if a.Min != 0 || a.Max != 0 {
		return a.Min, a.Max
	}
	if a.Scale == Log {
		if lo <= 0 || math.IsInf(lo, 1) {
			lo, hi = 1, 10
		}
		l, h := logStepBelow(lo), logStepAbove(hi)
		if l == h {
			h = logStepAbove(h * 1.0001)
		}
		return l, h
	}
	if lo > 0 && lo < hi/3 {
		lo = 0 // start at zero unless the data sit far above it
	}
	if lo == hi {
		if lo == 0 {
			return 0, 1
		}
		lo, hi = math.Min(0, lo), math.Max(0, hi)
	}
	step := niceStep((hi - lo) / 5)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

// ticks returns the axis's ticks over lo..hi.
func (a Axis) ticks(lo, hi float64) []Tick {
	if a.Ticks != nil {
		return a.Ticks
	}
	format := a.Format
	if format == nil {
		format = Number
	}
	var out []Tick
	if a.Scale == Log {
		decades := math.Log10(hi / lo)
		mults := []float64{1}
		if decades <= 2 {
			mults = []float64{1, 2, 5}
		}
		for d := math.Floor(math.Log10(lo)); d <= math.Ceil(math.Log10(hi)); d++ {
			for _, m := range mults {
				v := m * math.Pow(10, d)
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					out = append(out, Tick{v, format(v)})
				}
			}
		}
		return out
	}
	// bounds padded the range to a multiple of a step chosen for five
	// intervals; a sixth of the padded range finds that step again.
	step := niceStep((hi - lo) / 6)
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step
		out = append(out, Tick{v, format(v)})
	}
	return out
}

// logSteps are the mantissas a logarithmic axis ends on.
var logSteps = []float64{1, 2, 5, 10}

// logStepBelow is the largest 1, 2 or 5 times a power of ten <= v.
func logStepBelow(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	out := p
	for _, m := range logSteps {
		if m*p <= v*(1+1e-9) {
			out = m * p
		}
	}
	return out
}

// logStepAbove is the smallest 1, 2 or 5 times a power of ten >= v.
func logStepAbove(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range logSteps {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// Number formats a tick value with as few digits as it needs.
func Number(v float64) string {
	if v == 0 {
		return "0"
	}
	av := math.Abs(v)
	if av >= 1e6 || av < 1e-3 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	// Round to six significant digits first, so that accumulated steps
	// such as 0.1+0.2 print as 0.3.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}
