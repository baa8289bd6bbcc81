package load

import "github.com/meshbench/meshbench/internal/metrics"

// Merge adds other into r, exactly: counts add, histograms merge bucket by
// bucket. The results are taken to come from generators that ran side by
// side, so rates, connections and CPU add up and the window spans both. A
// zero Result takes the first merged result's options.
func (r *Result) Merge(other *Result) {
	if other == nil {
		return
	}
	if r.StatusCodes == nil {
		r.StatusCodes = map[int]int64{}
	}
	if r.ErrorKinds == nil {
		r.ErrorKinds = map[string]int64{}
	}
	if r.ByClass == nil {
		r.ByClass = map[string]*metrics.Histogram{}
	}
	if r.Start.IsZero() || (!other.Start.IsZero() && other.Start.Before(r.Start)) {
		r.Start = other.Start
	}
	if other.End.After(r.End) {
		r.End = other.End
	}
	if r.Options.URL == "" {
		r.Options = other.Options
	} else {
		r.Options.Rate += other.Options.Rate
		r.Options.Connections += other.Options.Connections
		r.Options.Requests += other.Options.Requests
	}
	r.Requests += other.Requests
	r.Errors += other.Errors
	r.LateSends += other.LateSends
	r.NewConnections += other.NewConnections
	for k, n := range other.StatusCodes {
		r.StatusCodes[k] += n
	}
	for k, n := range other.ErrorKinds {
		r.ErrorKinds[k] += n
	}
	for k, n := range other.Unopened {
		if r.Unopened == nil {
			r.Unopened = map[string]int64{}
		}
		r.Unopened[k] += n
	}
	r.Latency = mergeHist(r.Latency, other.Latency)
	r.SendLag = mergeHist(r.SendLag, other.SendLag)
	r.Uncorrected = mergeHist(r.Uncorrected, other.Uncorrected)
	for k, h := range other.ByClass {
		r.ByClass[k] = mergeHist(r.ByClass[k], h)
	}
	r.AchievedRate += other.AchievedRate
	r.WarmedUp = max(r.WarmedUp, other.WarmedUp)
	r.ClientCores += other.ClientCores
	r.ClientCPU += other.ClientCPU
	r.Distorted = r.Distorted || other.Distorted
	r.Warnings = append(r.Warnings, other.Warnings...)
}

// mergeHist returns a merged into a new or existing histogram; nil stays
// nil only when both are nil.
func mergeHist(a, b *metrics.Histogram) *metrics.Histogram {
	if b == nil {
		return a
	}
	if a == nil {
		a = metrics.NewHistogram()
	}
	a.Merge(b)
	return a
}
