package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrival processes of an open loop: how its intended send times are
// spaced at the rate. Options.Arrivals "" is ArrivalsUniform.
const (
	// ArrivalsUniform sends hit i at i/Rate exactly: evenly spaced, as
	// wrk2, vegeta, fortio and oha's --rate pace.
	ArrivalsUniform = "uniform"
	// ArrivalsPoisson sends at the arrivals of a Poisson process of the
	// rate: independent exponential gaps of mean 1/Rate, drawn from
	// Options.Seed, so that the same seed and rate give the same intended
	// send times. Queues form below saturation, as they do when users
	// arrive independently.
	ArrivalsPoisson = "poisson"
)

// ArrivalsOf is an open loop's arrival process, "" being uniform; ""
// for a closed loop, which has none.
func ArrivalsOf(rate float64, arrivals string) string {
	switch {
	case rate <= 0:
		return ""
	case arrivals == "":
		return ArrivalsUniform
	}
	return arrivals
}

// poissonPCG is the second word of the PCG state the gaps are drawn
// from, the seed being the first: fixed, so that a seed names one
// sequence. PCG's output is specified by math/rand/v2, so a seed gives
// the same gaps under every Go release.
const poissonPCG = 0x6172726976616c73 // "arrivals"

// poissonGaps draws the gaps between the arrivals of a Poisson process:
// exponential, of mean 1/rate, by inversion of 53 random bits, each
// rounded to the nanosecond. It allocates nothing.
type poissonGaps struct {
	rng  rand.PCG
	mean float64 // nanoseconds
}

func newPoissonGaps(rate float64, seed uint64) poissonGaps {
	return poissonGaps{rng: *rand.NewPCG(seed, poissonPCG), mean: float64(time.Second) / rate}
}

// next is the gap to the next arrival.
func (p *poissonGaps) next() time.Duration {
	// u is in (0, 1], never 0, so that its logarithm is finite: the
	// longest gap is 36.7 means.
	u := float64(p.rng.Uint64()>>11+1) * 0x1p-53
	// The explicit conversion keeps the product from being fused into
	// another operation (the spec allows FMA otherwise), so that every
	// architecture rounds alike.
	return time.Duration(math.Round(float64(-math.Log(u) * p.mean)))
}

// SubSeed is the seed of generator i of several that run one cell side
// by side, each from the cell's seed: generator 0 keeps it, the others get
// their own streams, so that per-namespace generators do not send in step.
// A zero seed stays zero (each draws its own).
func SubSeed(seed uint64, i int) uint64 {
	if seed == 0 || i == 0 {
		return seed
	}
	if s := splitmix64(seed ^ uint64(i)*0x9e3779b97f4a7c15); s != 0 {
		return s
	}
	return 1
}

// splitmix64 is SplitMix64's finalizer: a bijection that mixes every bit.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// SeedOf derives a non-zero seed from a study's seed and a key naming what
// runs with it (a cell), so that the same study and cell always draw the
// same arrivals.
func SeedOf(seed uint64, key string) uint64 {
	// FNV-1a of the key, mixed with the seed.
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	if s := splitmix64(seed ^ splitmix64(h)); s != 0 {
		return s
	}
	return 1
}

// loadModel names o's load model, for the text report.
func loadModel(o *Options) string {
	switch ArrivalsOf(o.Rate, o.Arrivals) {
	case "":
		return "closed loop"
	case ArrivalsPoisson:
		return fmt.Sprintf("poisson %g/s (seed %d)", o.Rate, o.Seed)
	}
	return fmt.Sprintf("constant %g/s", o.Rate)
}
