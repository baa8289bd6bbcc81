package search

import (
	"fmt"
	"math"
	"time"
)

// Config is one search's settings. Zero fields take the defaults noted.
type Config struct {
	SLO SLO `json:"slo"`
	// Start is the first rate tried, in requests per second (or Unit).
	Start float64 `json:"start_rps"`
	// Growth multiplies the rate while the SLO holds, and divides it
	// while it breaks, until a rate that meets it and one that breaks it
	// are known; default 2.
	Growth float64 `json:"growth"`
	// Trial is the shortest measured length of a trial; a trial at a rate
	// too low to send MinRequests in that time runs until it has; default
	// 5s.
	Trial time.Duration `json:"trial"`
	// Trials is how many trials locate the capacity once the SLO has been
	// seen both met and broken, each at the rate where the fit of every
	// trial so far puts it; default 10.
	Trials int `json:"trials"`
	// MinRequests is the fewest requests a trial carries: the SLO's
	// highest percentile read off at least metrics.TailSamples requests
	// beyond it (1,000 for a p99). Zero takes that figure.
	MinRequests int64 `json:"min_requests"`
	// RequestsPerUnit is the requests a second one unit of the rate sends:
	// 1 for a rate in requests per second, a connection's rate for a
	// search over connections held open; default 1.
	RequestsPerUnit float64 `json:"requests_per_unit"`
	// Budget bounds the measured trial time of the search; when the next
	// trial would overrun it the search stops, and gives a bound rather
	// than an estimate. Zero: no bound beyond MaxTrials.
	Budget time.Duration `json:"budget,omitempty"`
	// Retries bounds the re-runs of an inconclusive trial; default 2.
	Retries int `json:"retries"`
	// MinRate and MaxRate bound the rates tried; MaxRate 0 is unbounded.
	// Default MinRate: the rate at which a trial must run four times its
	// length to carry MinRequests (at most Start).
	MinRate float64 `json:"min_rps"`
	MaxRate float64 `json:"max_rps,omitempty"`
	// MaxTrials bounds the search's trials, retries included; default 40.
	MaxTrials int `json:"max_trials"`
	// Resamples is how many times the bootstrap runs the whole search
	// again on the fitted model for the interval; default 1000. Seed
	// seeds it, so that the same trials always give the same interval.
	Resamples int    `json:"resamples"`
	Seed      uint64 `json:"seed"`
	// Unit names what the rates count in the search's notes; default
	// "req/s". A search over another quantity (connections held open)
	// names it here.
	Unit string `json:"unit,omitempty"`
}

// Defaults.
const (
	DefaultGrowth    = 2.0
	DefaultTrial     = 5 * time.Second
	DefaultTrials    = 10
	DefaultRetries   = 2
	DefaultMaxTrials = 40
	DefaultResamples = 1000
)

// WithDefaults fills in zero fields.
func (c Config) WithDefaults() Config {
	if c.Growth == 0 {
		c.Growth = DefaultGrowth
	}
	if c.Trial == 0 {
		c.Trial = DefaultTrial
	}
	if c.Trials == 0 {
		c.Trials = DefaultTrials
	}
	if c.MinRequests == 0 {
		c.MinRequests = c.SLO.MinRequests()
	}
	if c.RequestsPerUnit == 0 {
		c.RequestsPerUnit = 1
	}
	if c.Retries == 0 {
		c.Retries = DefaultRetries
	}
	if c.MinRate == 0 && c.Trial > 0 {
		c.MinRate = float64(c.MinRequests) / (c.RequestsPerUnit * 4 * c.Trial.Seconds())
		if c.Start > 0 {
			c.MinRate = min(c.MinRate, c.Start)
		}
	}
	if c.MaxTrials == 0 {
		c.MaxTrials = DefaultMaxTrials
	}
	if c.Resamples == 0 {
		c.Resamples = DefaultResamples
	}
	if c.Unit == "" {
		c.Unit = "req/s"
	}
	return c
}

// Validate says what is wrong with a defaulted configuration.
func (c Config) Validate() error {
	if err := c.SLO.Validate(); err != nil {
		return err
	}
	switch {
	case !(c.Start > 0):
		return fmt.Errorf("start_rate must be positive")
	case !(c.Growth > 1):
		return fmt.Errorf("growth %g must be above 1", c.Growth)
	case c.Trial <= 0:
		return fmt.Errorf("trial length %s must be positive", c.Trial)
	case c.Trials < minTrials:
		return fmt.Errorf("trials %d: at least %d trials must locate the capacity for its fit to have residuals", c.Trials, minTrials)
	case c.MinRequests < 1:
		return fmt.Errorf("min_requests must be positive")
	case !(c.RequestsPerUnit > 0):
		return fmt.Errorf("requests per unit must be positive")
	case c.Budget < 0:
		return fmt.Errorf("budget must not be negative")
	case c.Budget > 0 && c.Budget < c.Trial:
		return fmt.Errorf("budget %s leaves no room for one trial of %s", c.Budget, c.Trial)
	case c.Retries < 0:
		return fmt.Errorf("retries must not be negative")
	case !(c.MinRate > 0) || c.MinRate > c.Start:
		return fmt.Errorf("min rate %g must be positive and at most the start rate %g", c.MinRate, c.Start)
	case c.MaxRate != 0 && c.MaxRate < c.Start:
		return fmt.Errorf("max rate %g is below the start rate %g", c.MaxRate, c.Start)
	case c.MaxTrials < c.Trials+2:
		return fmt.Errorf("max trials %d leaves no room for a rate that meets the SLO, one that breaks it, and %d trials locating the capacity", c.MaxTrials, c.Trials)
	case c.Resamples < minResamples:
		return fmt.Errorf("resamples %d: at least %d are needed for the 2.5%% tails of a 95%% interval", c.Resamples, minResamples)
	}
	return nil
}

// minTrials is the fewest locating trials a search may have: the fit has
// three parameters, and needs more trials than that within the score band
// to say how far its line is from them.
const minTrials = 4

// minResamples is the fewest bootstrap resamples whose 2.5% tails hold
// more than a couple of them each.
const minResamples = 200

// duration is the measured length of a trial at rate: the configured one,
// or as long as MinRequests take at that rate, in whole tenths of a
// second.
func (c Config) duration(rate float64) time.Duration {
	need := float64(c.MinRequests) / (rate * c.RequestsPerUnit)
	d := time.Duration(math.Ceil(need*10)) * time.Second / 10
	return max(c.Trial, d)
}
