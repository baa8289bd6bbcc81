package study

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DefaultCI is the relative half-width of the 95% interval of every
// mesh's p50 overhead at which adaptive repetitions stop.
const DefaultCI = 0.10

// Repetitions is how many interleaved rounds of every cell run: a fixed
// count (`repetitions: 5`), or adaptively (`repetitions: {min: 5, max: 12,
// ci: 0.1}`): Min rounds, then one more at a time until every mesh's p50
// overhead over the baseline has a 95% interval whose half-width is under
// CI of the overhead, or Max rounds have run.
type Repetitions struct {
	Min int     `json:"min,omitempty"`
	Max int     `json:"max,omitempty"`
	CI  float64 `json:"ci,omitempty"`
	// count is set when the file gave a plain count, so that an error
	// names what the user wrote, not min.
	count bool
}

// Adaptive reports whether rounds are added until the intervals are narrow.
func (r Repetitions) Adaptive() bool { return r.Max > r.Min }

// UnmarshalJSON takes a count or a {min, max, ci} object.
func (r *Repetitions) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		var n int
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a count or {min, max, ci}, got %s", b)
		}
		*r = Repetitions{Min: n, Max: n, count: true}
		return nil
	}
	type plain Repetitions
	var p plain
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return fmt.Errorf("want a count or {min, max, ci}: %w", err)
	}
	*r = Repetitions(p)
	return nil
}

// MarshalJSON writes a fixed count as a number.
func (r Repetitions) MarshalJSON() ([]byte, error) {
	if !r.Adaptive() && r.CI == 0 {
		return json.Marshal(r.Min)
	}
	type plain Repetitions
	return json.Marshal(plain(r))
}

func (r *Repetitions) defaults() {
	switch {
	case r.Min == 0 && r.Max == 0:
		r.Min, r.Max = DefaultRepetitions, DefaultRepetitions
	case r.Max == 0:
		r.Max = r.Min
	case r.Min == 0:
		r.Min = min(DefaultRepetitions, r.Max)
	}
	if r.Adaptive() && r.CI == 0 {
		r.CI = DefaultCI
	}
}

func (r Repetitions) validate() error {
	switch {
	case r.count && r.Min < 1:
		return fieldError("repetitions", "must be at least 1, got %d", r.Min)
	case r.Min < 1:
		return fieldError("repetitions", "min must be at least 1, got %d", r.Min)
	case r.Max < r.Min:
		return fieldError("repetitions", "max (%d) must not be below min (%d)", r.Max, r.Min)
	case r.CI < 0 || r.CI >= 1:
		return fieldError("repetitions", "ci is a relative half-width in (0, 1), got %g", r.CI)
	}
	return nil
}
