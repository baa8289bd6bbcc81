package load

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/search"
)

// Outcome is what a capacity search judges of the results of generators
// that ran side by side: their merged latency and counts (a request failed
// when it got no response or a 5xx one), and saturated when any generator
// ran out of CPU, local ports or descriptors (OwnLimit). Falling short of the rate is not
// saturation: with every connection busy it is the server that is slow,
// and latency measured from the intended send times shows it.
func Outcome(gens []Result) (search.Outcome, *Result) {
	merged := &Result{}
	var o search.Outcome
	var why []string
	for i := range gens {
		merged.Merge(&gens[i])
		if util, full := gens[i].CPUSaturated(); full {
			o.Saturated = true
			why = append(why, fmt.Sprintf("generator %d at %.0f%% of %d CPUs", i+1, 100*util, gens[i].ClientCores))
		}
		if own, limited := gens[i].OwnLimit(); limited {
			o.Saturated = true
			why = append(why, fmt.Sprintf("generator %d: %s", i+1, own))
		}
	}
	o.Reason = strings.Join(why, "; ")
	o.Achieved, o.Requests, o.Errors = merged.AchievedRate, merged.Requests, merged.Failed()
	if h := merged.Latency; h != nil && h.Count() > 0 {
		o.P50 = h.Percentile(50)
		o.P95 = h.Percentile(95)
		o.P99 = h.Percentile(99)
	}
	return o, merged
}

// SearchTrial is a capacity search's trial against one target: o's load
// at the trial's rate for its duration, after o's warm-up. Each trial's
// result goes to keep, when not nil.
func SearchTrial(o Options, keep func(*Result)) search.TrialFunc {
	return func(ctx context.Context, rate float64, d time.Duration) (search.Outcome, error) {
		o := o
		o.Rate, o.Duration, o.Requests = rate, d, 0
		res, err := Run(ctx, o, nil)
		if err != nil {
			return search.Outcome{}, err
		}
		if keep != nil {
			keep(res)
		}
		out, _ := Outcome([]Result{*res})
		return out, nil
	}
}
