package study

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DefaultCI is the relative half-width of the 95% interval of every
// mesh's p50 overhead that a planned count aims at.
const DefaultCI = 0.10

// Repetitions is how many interleaved rounds of every cell run: a fixed
// count (`repetitions: 6`), or planned from a pilot (`repetitions: {min: 6,
// max: 12, ci: 0.1}`): Min rounds run first, and their spread plans the
// total, at most Max, at which every mesh's p50 overhead over the
// baseline would have a 95% interval within CI of itself; exactly that
// many run. The count is decided once, from the pilot, and never from the
// intervals as they narrow: stopping at the first narrow interval
// favours the samples that happen to bunch, and its intervals cover less
// than they say (docs/statistics.md measures both).
type Repetitions struct {
	Min int     `json:"min,omitempty"`
	Max int     `json:"max,omitempty"`
	CI  float64 `json:"ci,omitempty"`
}

// Adaptive reports whether the pilot plans the count.
func (r Repetitions) Adaptive() bool { return r.Max > r.Min }

// UnmarshalJSON takes a count or a {min, max, ci} object.
func (r *Repetitions) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		var n int
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a count or {min, max, ci}, got %s", b)
		}
		*r = Repetitions{Min: n, Max: n}
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
	case r.Min < 1:
		return fieldError("repetitions", "min must be at least 1, got %d", r.Min)
	case r.Max < r.Min:
		return fieldError("repetitions", "max (%d) must not be below min (%d)", r.Max, r.Min)
	case r.CI < 0 || r.CI >= 1:
		return fieldError("repetitions", "ci is a relative half-width in (0, 1), got %g", r.CI)
	}
	return nil
}

// validateDeployments checks the deployments against the rounds.
func (s *Study) validateDeployments() error {
	d, n := s.Deployments, s.Repetitions.Min
	switch {
	case d < 1:
		return fieldError("deployments", "must be at least 1, got %d", d)
	case n >= 1 && d > n:
		return fieldError("deployments", "%d deployments need at least as many rounds; repetitions has %d", d, n)
	case n >= 1 && n%d != 0:
		return fieldError("deployments", "must divide repetitions (%d) so that every deployment runs as many rounds; %d does not", n, d)
	}
	return nil
}

// RoundsPerDeployment is how many rounds each deployment runs; 0 with a
// single deployment, which runs every round however many are planned.
func (s *Study) RoundsPerDeployment() int {
	if s.Deployments <= 1 {
		return 0
	}
	return s.Repetitions.Min / s.Deployments
}

// DeploymentOf is the deployment a round runs in, from 1.
func (s *Study) DeploymentOf(round int) int {
	per := s.RoundsPerDeployment()
	if per == 0 {
		return 1
	}
	return (round-1)/per + 1
}
