package search

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/metrics"
)

// SLO is the objective a rate must meet: latency percentiles at or under
// their limits (zero leaves a percentile unchecked) and a share of failed
// requests at or under MaxErrorRate.
type SLO struct {
	P50, P95, P99 time.Duration
	MaxErrorRate  float64
}

// sloJSON is an SLO as results store it: limits in milliseconds, and the
// SLO as text for a reader.
type sloJSON struct {
	P50Ms        float64 `json:"p50_ms,omitempty"`
	P95Ms        float64 `json:"p95_ms,omitempty"`
	P99Ms        float64 `json:"p99_ms,omitempty"`
	MaxErrorRate float64 `json:"max_error_rate"`
	Text         string  `json:"text"`
}

// MarshalJSON writes the limits in milliseconds.
func (s SLO) MarshalJSON() ([]byte, error) {
	return json.Marshal(sloJSON{P50Ms: ms(s.P50), P95Ms: ms(s.P95), P99Ms: ms(s.P99), MaxErrorRate: s.MaxErrorRate, Text: s.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *SLO) UnmarshalJSON(b []byte) error {
	var j sloJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	d := func(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }
	*s = SLO{P50: d(j.P50Ms), P95: d(j.P95Ms), P99: d(j.P99Ms), MaxErrorRate: j.MaxErrorRate}
	return nil
}

// Validate says what is wrong with an SLO, naming the field.
func (s SLO) Validate() error {
	switch {
	case s.P50 < 0 || s.P95 < 0 || s.P99 < 0:
		return fmt.Errorf("slo: latency limits must be positive")
	case s.P50 == 0 && s.P95 == 0 && s.P99 == 0:
		return fmt.Errorf("slo: p99 (or p50/p95) is required: a search needs a latency limit")
	case s.MaxErrorRate < 0 || s.MaxErrorRate >= 1:
		return fmt.Errorf("slo: max_error_rate %g must be in [0, 1)", s.MaxErrorRate)
	}
	return nil
}

// MinRequests is the fewest requests a trial must carry for the SLO's
// highest latency percentile to be read off it (metrics.MinSamples):
// 1,000 for a p99, 200 for a p95, 20 for a p50.
func (s SLO) MinRequests() int64 {
	p := 50.0
	switch {
	case s.P99 > 0:
		p = 99
	case s.P95 > 0:
		p = 95
	}
	return metrics.MinSamples(p)
}

// String is the SLO as a reader writes it: "p99 <= 10ms, errors <= 0.1%".
func (s SLO) String() string {
	var parts []string
	for _, l := range []struct {
		name string
		d    time.Duration
	}{{"p50", s.P50}, {"p95", s.P95}, {"p99", s.P99}} {
		if l.d > 0 {
			parts = append(parts, fmt.Sprintf("%s <= %s", l.name, l.d))
		}
	}
	parts = append(parts, fmt.Sprintf("errors <= %g%%", 100*s.MaxErrorRate))
	return strings.Join(parts, ", ")
}

// MaxShortfall is the share of the offered rate a trial may fall short by
// and still count: an open loop whose sends lag further behind has found a
// system that cannot take the rate, and the requests it never sent have no
// latency to show it.
const MaxShortfall = 0.05

// Score is how far a trial at the offered rate is from the SLO: the
// largest of each measured figure over its limit (the rate's shortfall
// over MaxShortfall among them), so that a score at or under 1 meets the
// SLO, and the constraint that binds is the one named. The search fits
// the logarithms of its trials' scores against the rate.
func (s SLO) Score(rate float64, o Outcome) (float64, string) {
	score, binding := 0.0, ""
	check := func(name string, v, limit float64) {
		if limit <= 0 {
			return
		}
		if r := v / limit; r > score || binding == "" {
			score, binding = r, name
		}
	}
	check("p50", o.P50.Seconds(), s.P50.Seconds())
	check("p95", o.P95.Seconds(), s.P95.Seconds())
	check("p99", o.P99.Seconds(), s.P99.Seconds())
	if rate > 0 && o.Achieved < rate {
		check("rate", 1-o.Achieved/rate, MaxShortfall)
	}
	if rate := o.ErrorRate(); rate > 0 {
		if s.MaxErrorRate == 0 {
			return math.Inf(1), "errors"
		}
		check("errors", rate, s.MaxErrorRate)
	}
	return score, binding
}

// Verdict is what one trial says about its rate.
type Verdict string

// Verdicts.
const (
	Pass Verdict = "pass" // the SLO held at this rate
	Fail Verdict = "fail" // the SLO broke at this rate
	// Inconclusive: the trial is no evidence either way, because the load
	// generator saturated or the host was noisy.
	Inconclusive Verdict = "inconclusive"
)

// Judge decides the verdict of a trial at the offered rate and says why.
func (s SLO) Judge(rate float64, o Outcome) (Verdict, string) {
	switch {
	case o.Saturated:
		return Inconclusive, joinReason("the load generator saturated", o.Reason)
	case o.Noisy:
		return Inconclusive, joinReason("the host was noisy", o.Reason)
	case o.Unmeasured:
		return Inconclusive, joinReason("the trial could not be measured", o.Reason)
	case o.Requests == 0:
		return Fail, "no request completed"
	}
	score, binding := s.Score(rate, o)
	if score <= 1 {
		return Pass, ""
	}
	switch binding {
	case "rate":
		return Fail, fmt.Sprintf("achieved %.4g req/s, %.0f%% short of the rate", o.Achieved, 100*(1-o.Achieved/rate))
	case "errors":
		return Fail, fmt.Sprintf("errors %.3g%% over %g%%", 100*o.ErrorRate(), 100*s.MaxErrorRate)
	case "p50":
		return Fail, fmt.Sprintf("p50 %s over %s", o.P50.Round(time.Microsecond), s.P50)
	case "p95":
		return Fail, fmt.Sprintf("p95 %s over %s", o.P95.Round(time.Microsecond), s.P95)
	}
	return Fail, fmt.Sprintf("p99 %s over %s", o.P99.Round(time.Microsecond), s.P99)
}

func joinReason(a, b string) string {
	if b == "" {
		return a
	}
	return a + ": " + b
}
