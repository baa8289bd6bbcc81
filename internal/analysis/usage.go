package analysis

import (
	"sort"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// sumOverTime sums several components' samples into one series. Samplers
// read every component once per tick, a few milliseconds apart, so the
// series with the most samples gives the time grid and every other series
// contributes its nearest sample to each grid point.
func sumOverTime(ss []metrics.Series, start time.Time) []UsagePoint {
	grid := -1
	for i, s := range ss {
		if grid < 0 || len(s.Samples) > len(ss[grid].Samples) {
			grid = i
		}
	}
	if grid < 0 || len(ss[grid].Samples) == 0 {
		return nil
	}
	pts := make([]UsagePoint, len(ss[grid].Samples))
	for i, x := range ss[grid].Samples {
		pts[i].T = x.Time.Sub(start).Seconds()
	}
	for _, s := range ss {
		if len(s.Samples) == 0 {
			continue
		}
		for i, x := range ss[grid].Samples {
			n := nearest(s.Samples, x.Time)
			pts[i].CPU += n.CPUCores
			pts[i].Mem += float64(n.WorkingSet)
		}
	}
	return pts
}

// nearest returns the sample closest to t; samples are in time order.
func nearest(samples []metrics.Sample, t time.Time) metrics.Sample {
	i := sort.Search(len(samples), func(i int) bool { return !samples[i].Time.Before(t) })
	switch {
	case i == 0:
		return samples[0]
	case i == len(samples):
		return samples[i-1]
	case t.Sub(samples[i-1].Time) <= samples[i].Time.Sub(t):
		return samples[i-1]
	}
	return samples[i]
}
